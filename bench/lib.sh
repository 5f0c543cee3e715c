# Shared by bench/suite.sh and bench/compare.sh: temp dir, process
# cleanup, ports, waiting, and writing the results file. Sourced, not run.

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Without SHOAL, the tree as it is: bin/shoal is built again (quick, from
# Go's build cache), never a binary left from an older commit.
if [[ -z ${SHOAL:-} ]]; then
	SHOAL=./bin/shoal
	make -s build
fi
CONC=${CONC:-16}                 # connections for stat and list
ROUNDS=${ROUNDS:-5}              # --vs rounds
ROUND=${ROUND:-2s}               # length of one --vs round
PHASE=${PHASE:-3s}               # length of other phases
SWEEP_SIZES=${SWEEP_SIZES:-1k,16k,64k,128k,512k,1m}
FILES=${FILES:-10000}
DIRS=${DIRS:-100}

TMP=$(mktemp -d /tmp/shoal-bench.XXXXXX)
PIDS=()
KEEP=${KEEP:-}                    # KEEP=1: keep the temp dir (server logs, data) for a post-mortem
# stop_servers stops every server start began, and waits for them.
stop_servers() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
cleanup() {
	stop_servers
	if [[ -n $KEEP ]]; then
		echo "kept $TMP (server logs: $TMP/*.log)" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT INT TERM

if [[ ! -x $SHOAL ]]; then
	echo "$SHOAL: no such executable" >&2
	exit 1
fi

# free_port prints a loopback TCP port nothing listens on.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

# wait_port PORT [SECONDS]: wait until something listens on the port.
wait_port() {
	local i
	for ((i = 0; i < ${2:-15} * 10; i++)); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "nothing listens on 127.0.0.1:$1" >&2
	return 1
}

# start NAME CMD...: run a server in the background, log in $TMP/NAME.log.
start() {
	local name=$1
	shift
	"$@" >"$TMP/$name.log" 2>&1 &
	PIDS+=($!)
}

# The results file: bench/results/<date>-<host>[-SUFFIX].md, or -2, -3, … after it
# when a run of that day has it already (nothing is overwritten).
results_file() {
	mkdir -p bench/results
	local base n=2
	base="bench/results/$(date -u +%Y-%m-%d)-$(hostname -s)${1:+-$1}"
	OUT="$base.md"
	# A second run the same day gets its own file: -2, -3, …
	while [[ -e $OUT ]]; do
		OUT="$base-$n.md"
		n=$((n + 1))
	done
	: >"$OUT"
}

md() { printf '%s\n' "$@" >>"$OUT"; }

# figure TITLE ARGS...: run `shoal bench ARGS`, show its table, and append
# the title, the command and the table to the results file.
figure() {
	local title=$1
	shift
	echo "== $title"
	# The command as run, credentials masked.
	local shown=() a hide=
	for a in "$@"; do
		if [[ -n $hide ]]; then shown+=("…"); hide=; continue; fi
		[[ $a == --token || $a == -u || $a == --user ]] && hide=1
		shown+=("$a")
	done
	md "" "### $title" "" '```' "\$ shoal bench ${shown[*]}"
	if "$SHOAL" bench "$@" -q | tee -a "$OUT"; then
		md '```'
	else
		md "(failed: exit $?)" '```'
		echo "   (failed)"
	fi
}

# machine: the description at the top of a results file.
machine() {
	md "## Machine" ""
	"$SHOAL" bench machine >>"$OUT"
	md "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)" \
		"- shoal: $("$SHOAL" version 2>/dev/null | head -n1)"
}

start_ceiling() {
	CEIL_PORT=$(free_port)
	start ceiling "$SHOAL" bench ceiling --listen "127.0.0.1:$CEIL_PORT"
	wait_port "$CEIL_PORT"
	CEILING="http://127.0.0.1:$CEIL_PORT"
}
