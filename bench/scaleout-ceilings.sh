#!/usr/bin/env bash
# Issue 3's speed figures, in one run on this machine: HEAD req/s of
# `shoal md` over MariaDB for (a) in-process hits, (b) memcached hits (L1
# off), (c) SQL only (no cache), each with 1 and 2 md (2 md: --reuseport
# on one port), side by side with the matching ceilings (`shoal bench
# ceiling --backend none|memcached|sql`); the bulk creation rate of
# `shoal admin populate` into MariaDB; and the SQL round trips of a cold
# stat by path depth (md's shoal_catalog_round_trips_total).
#
#   bench/scaleout-ceilings.sh            # FILES=100000 DIRS=100 DUR=10s CONC=16 HOT=10000
#
# Results go to bench/results/<date>-<host>-scaleout.md. The load generator
# (shoal bench stat) runs on the same box, so every figure shares the CPUs
# with it. Hits are measured over HOT paths of the catalog after one
# warming pass over them; SQL-only over the same paths.
FILES=${FILES:-100000} # set before lib.sh, whose defaults are for bench/suite.sh
DIRS=${DIRS:-100}
source "$(dirname "$0")/lib.sh"
PREFIX=${PREFIX:-/bench/scale/tree}
DUR=${DUR:-10s}
HOT=${HOT:-10000}
L1TTL=${L1TTL:-10m} # longer than the run: (a) measures hits, not expiry

for tool in mariadbd mariadb-install-db memcached jq curl; do
	command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] || { echo "$tool not installed" >&2; exit 1; }
done
results_file scaleout
md "# shoal scale-out: HEAD req/s vs backend ceilings — $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s)" ""
machine
md "" "Command: \`bench/scaleout-ceilings.sh\` (FILES=$FILES DIRS=$DIRS PREFIX=$PREFIX DUR=$DUR CONC=$CONC HOT=$HOT)."

# MariaDB (own datadir, TCP on loopback) and memcached.
me=$(id -un)
mdb=$(command -v mariadbd || echo /usr/sbin/mariadbd)
mport=$(free_port)
mariadb-install-db --no-defaults --datadir="$TMP/mysql" --user="$me" --skip-test-db >"$TMP/install-db.log" 2>&1
start mariadb "$mdb" --no-defaults --datadir="$TMP/mysql" --socket="$TMP/mysql.sock" --port="$mport" \
	--bind-address=127.0.0.1 --skip-name-resolve --skip-log-bin --user="$me" \
	--innodb-buffer-pool-size=256M --innodb-flush-log-at-trx-commit=1 --max-connections=500
wait_port "$mport" 60
mariadb --no-defaults --socket="$TMP/mysql.sock" -uroot -e \
	"CREATE DATABASE shoal; CREATE USER 'shoal'@'127.0.0.1' IDENTIFIED BY 'bench'; GRANT ALL ON shoal.* TO 'shoal'@'127.0.0.1';"
DSN="mysql://shoal:bench@127.0.0.1:$mport/shoal"
mcport=$(free_port)
start memcached memcached -l 127.0.0.1 -p "$mcport" -U 0 -m 256 -u "$me"
wait_port "$mcport"
MC="127.0.0.1:$mcport"
printf 'k1 %s\n' "$(head -c32 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$TMP/secret"

# Bulk creation.
md "" "## Bulk creation into MariaDB" "" '```' "\$ shoal admin populate --catalog mysql://… --prefix $PREFIX --files $FILES --dirs $DIRS"
"$SHOAL" admin populate --catalog "$DSN" --prefix "$PREFIX" --files "$FILES" --dirs "$DIRS" | tee -a "$OUT"
md '```'

# The HOT paths, named as populate names them.
for ((i = 0; i < HOT && i < FILES; i++)); do printf '%s/d%04d/f%07d\n' "$PREFIX" $((i % DIRS)) "$i"; done >"$TMP/hot.txt"

MDPIDS=()
# start_md N ENV... -- ARGS...: N md processes sharing one port (--reuseport).
start_md() {
	local n=$1 i attempt
	shift
	for attempt in 1 2 3; do # a port free a moment ago may be taken meanwhile
		MDPORT=$(free_port)
		for ((i = 0; i < n; i++)); do
			env "$@" "$SHOAL" md --listen "127.0.0.1:$MDPORT" --reuseport --catalog "$DSN" --secret-file "$TMP/secret" \
				"${MDARGS[@]}" >"$TMP/md-$MDPORT-$i.log" 2>&1 &
			MDPIDS+=($!)
			PIDS+=($!) # killed by lib.sh's cleanup if the script stops early
		done
		if wait_port "$MDPORT" 30; then
			sleep 0.5 # let the other processes bind too
			return 0
		fi
		tail -n 3 "$TMP"/md-"$MDPORT"-*.log >&2
		stop_md
	done
	return 1
}
stop_md() {
	kill "${MDPIDS[@]}" 2>/dev/null || true
	wait "${MDPIDS[@]}" 2>/dev/null || true
	MDPIDS=()
}
CEILPIDS=()
start_ceil() { # start_ceil ARGS...: a ceiling server; sets CEILURL
	local p
	p=$(free_port)
	"$SHOAL" bench ceiling --listen "127.0.0.1:$p" "$@" >"$TMP/ceiling-$p.log" 2>&1 &
	CEILPIDS+=($!)
	PIDS+=($!)
	wait_port "$p" 30
	CEILURL="http://127.0.0.1:$p"
}

# rate URL: warm once over the HOT paths, then measure; prints req/s and
# errors.
rate() {
	"$SHOAL" bench stat --url "$1" --paths "$TMP/hot.txt" -c "$CONC" -n "$HOT" --warmup 0s -q >/dev/null
	"$SHOAL" bench stat --url "$1" --paths "$TMP/hot.txt" -c "$CONC" -d "$DUR" --warmup 1s -q --json "$TMP/r.json" >/dev/null
	jq -r '.results[0] | "\(.req_per_sec|floor) \(.errors)"' "$TMP/r.json"
}

ROWS=()
row() { # row NAME REQ/S ERRORS CEILING-REQ/S
	local ratio
	ratio=$(awk -v a="$2" -v b="$4" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
	ROWS+=("| $1 | $2 | $3 | $4 | $ratio |")
	echo "$1: $2 req/s ($3 errors), ceiling $4, ratio $ratio"
}

echo "== ceilings"
start_ceil --backend none
read -r c_none _ < <(rate "$CEILURL")
start_ceil --backend memcached --memcached "$MC"
read -r c_mc _ < <(rate "$CEILURL")
start_ceil --backend sql --catalog "$DSN"
read -r c_sql _ < <(rate "$CEILURL")
kill "${CEILPIDS[@]}"; wait "${CEILPIDS[@]}" 2>/dev/null || true

for n in 1 2; do
	echo "== $n md: (a) in-process hit"
	MDARGS=()
	start_md "$n" SHOAL_CACHE_L1=on SHOAL_CACHE_L1_TTL="$L1TTL"
	read -r r e < <(rate "http://127.0.0.1:$MDPORT")
	row "(a) in-process hit, $n md" "$r" "$e" "$c_none"
	stop_md
	echo "== $n md: (b) memcached hit, L1 off"
	MDARGS=(--memcached "$MC")
	start_md "$n" SHOAL_CACHE_L1=off
	read -r r e < <(rate "http://127.0.0.1:$MDPORT")
	row "(b) memcached hit, $n md" "$r" "$e" "$c_mc"
	stop_md
	echo "== $n md: (c) SQL only"
	MDARGS=()
	start_md "$n" SHOAL_CACHE_L1=off
	read -r r e < <(rate "http://127.0.0.1:$MDPORT")
	row "(c) SQL only, $n md" "$r" "$e" "$c_sql"
	stop_md
done
md "" "## HEAD req/s (CONC=$CONC connections, $DUR per figure, $HOT paths at depth $(($(tr -cd / <<<"$PREFIX" | wc -c) + 2)))" "" \
	"Ceilings: none = constant answer ($c_none req/s), memcached = one get per HEAD ($c_mc), sql = one primary-key SELECT per HEAD ($c_sql)." "" \
	"| case | req/s | errors | matching ceiling req/s | ratio |" "| --- | --- | --- | --- | --- |" "${ROWS[@]}"

# Cold stat cost: SQL round trips of one HEAD by path depth, md with no cache.
echo "== round trips by depth"
MDARGS=()
start_md 1 SHOAL_CACHE_L1=off
u="http://127.0.0.1:$MDPORT"
trips() { curl -s "$u/.shoal/metrics" | awk '$1 == "shoal_catalog_round_trips_total" { print $2 }'; }
md "" "## Cold stat: SQL round trips per HEAD by depth (md, no cache)" "" "| depth | existing file | missing file (parent exists) |" "| --- | --- | --- |"
dir=""
for d in 1 2 3 4 5 6 7 8; do
	curl -s -o /dev/null -X PUT --data x "$u$dir/depth$d" -H 'Expect:'
	b=$(trips); curl -s -o /dev/null -I "$u$dir/depth$d"; a=$(trips)
	b2=$(trips); curl -s -o /dev/null -I "$u$dir/missing$d"; a2=$(trips)
	md "| $d | $((a - b)) | $((a2 - b2)) |"
	curl -s -o /dev/null -X MKCOL "$u$dir/sub$d/"
	dir="$dir/sub$d"
done
stop_md
echo "results: $OUT"
