#!/usr/bin/env bash
# A third-party pull (davix-cp --copy-mode pull) of a SIZE_MIB file
# between two `shoal all` on this box, against curl GET piped into curl
# PUT through the same two servers (both follow md's redirects, so both
# move the bytes data server to data server), in alternating rounds.
# Every copy is checked against the source's adler32 and deleted before
# the next round. Writes bench/results/<date>-<host>-tpc.md.
#
#   bench/tpc-vs-curl.sh                 # 1 GiB, 5 rounds
#   SIZE_MIB=256 ROUNDS=3 bench/tpc-vs-curl.sh
source "$(dirname "$0")/lib.sh"

SIZE_MIB=${SIZE_MIB:-1024}
ROUNDS=${ROUNDS:-5}
for tool in davix-cp curl; do
	command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 2; }
done

node() { # node NAME PORT: start a shoal all, wait until ready
	mkdir -p "$TMP/$1"
	SHOAL_TPC_ALLOW_LOCAL=true start "$1" "$SHOAL" all --data "$TMP/$1" --listen "127.0.0.1:$2" --log-level warn
	for ((i = 0; i < 300; i++)); do
		grep -q '^ready' "$TMP/$1.log" && return 0
		sleep 0.1
	done
	echo "$1 not ready" >&2
	cat "$TMP/$1.log" >&2
	return 1
}
A_PORT=$(free_port)
B_PORT=$(free_port)
node a "$A_PORT"
node b "$B_PORT"
A=http://127.0.0.1:$A_PORT
B=http://127.0.0.1:$B_PORT

echo "writing a $SIZE_MIB MiB source on A"
head -c "$((SIZE_MIB << 20))" /dev/urandom >"$TMP/src"
curl -sfSL -T "$TMP/src" "$A/src" -o /dev/null
rm "$TMP/src"
want=$(curl -sfSI -H 'Want-Digest: adler32' "$A/src" | tr -d '\r' | sed -n 's/^Digest: //Ip')

# now: seconds since the epoch, to the nanosecond.
now() { date +%s.%N; }
TICK=$(getconf CLK_TCK)
# servers_cpu: CPU seconds both shoal processes have used.
servers_cpu() { cat "/proc/${PIDS[0]}/stat" "/proc/${PIDS[1]}/stat" | awk -v t="$TICK" '{s += $14 + $15} END {printf "%.3f", s / t}'; }
# timed CMD...: run CMD (a client, or a pipeline in bash -c) and print
# "MB/s CPU-s/GiB": the rate, and the CPU of the servers and of the
# client processes per GiB moved.
timed() {
	local c0 c1 t0 t1 client
	c0=$(servers_cpu)
	t0=$(now)
	client=$( { TIMEFORMAT='%3U %3S'; time "$@" >/dev/null; } 2>&1 | tail -n1)
	t1=$(now)
	c1=$(servers_cpu)
	echo "$t0 $t1 $c0 $c1 $client" | awk -v s="$SIZE_MIB" '{printf "%.1f %.2f\n", s * 1.048576 / ($2 - $1), ($4 - $3 + $5 + $6) * 1024 / s}'
}
# check NAME: the copy on B has the source's adler32; then delete it.
check() {
	local got
	got=$(curl -sfSI -H 'Want-Digest: adler32' "$B/$1" | tr -d '\r' | sed -n 's/^Digest: //Ip')
	if [[ $got != "$want" ]]; then
		echo "$1: Digest '$got', want '$want'" >&2
		exit 1
	fi
	curl -sfS -X DELETE "$B/$1" -o /dev/null
}
run_tpc() {
	timed davix-cp --copy-mode pull "$A/src" "$B/tpc-$1"
	check "tpc-$1"
}
run_curl() {
	timed bash -c "curl -sfSL '$A/src' | curl -sfSL -T - '$B/curl-$1' -o /dev/null"
	check "curl-$1"
}

results_file tpc
md "# Third-party pull vs curl | curl, $SIZE_MIB MiB" ""
machine
md "" "Command: \`SIZE_MIB=$SIZE_MIB ROUNDS=$ROUNDS bench/tpc-vs-curl.sh\`" "" \
	"MB/s of the copy, and CPU seconds per GiB of both servers and the client processes." "" \
	"| round | order | davix-cp --copy-mode pull MB/s (CPU s/GiB) | curl GET \\| curl PUT MB/s (CPU s/GiB) | ratio | load average |" \
	"| --- | --- | --- | --- | --- | --- |"
tpcs=() curls=() ratios=() tcpus=() ccpus=()
for ((r = 1; r <= ROUNDS; r++)); do
	# Command substitutions, not process substitutions: each copy and its
	# check end before the next starts, and a failed check stops the script.
	if ((r % 2)); then
		order="tpc first"
		tout=$(run_tpc "$r")
		cout=$(run_curl "$r")
	else
		order="curl first"
		cout=$(run_curl "$r")
		tout=$(run_tpc "$r")
	fi
	read -r t tcpu <<<"$tout"
	read -r c ccpu <<<"$cout"
	ratio=$(awk -v t="$t" -v c="$c" 'BEGIN {printf "%.2f", t / c}')
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	echo "round $r ($order): tpc $t MB/s ($tcpu CPU s/GiB), curl $c MB/s ($ccpu CPU s/GiB), ratio $ratio, load $load"
	md "| $r | $order | $t ($tcpu) | $c ($ccpu) | $ratio | $load |"
	tpcs+=("$t") curls+=("$c") ratios+=("$ratio") tcpus+=("$tcpu") ccpus+=("$ccpu")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
summary="medians: tpc $(median "${tpcs[@]}") MB/s ($(median "${tcpus[@]}") CPU s/GiB), curl $(median "${curls[@]}") MB/s ($(median "${ccpus[@]}") CPU s/GiB), ratio $(median "${ratios[@]}")"
echo "$summary"
md "" "$summary; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "results: $OUT"
