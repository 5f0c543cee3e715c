#!/usr/bin/env bash
# make bench: the standard suite against shoal on this machine, in under
# five minutes, written to bench/results/<date>-<host>.md.
#
#  1. the embedded default: shoal all (SQLite, in-process cache);
#  2. when mariadbd and memcached are installed, the scale-out stack:
#     MariaDB, memcached, two `shoal md` and one `shoal disk`;
# each side by side with the ceiling (shoal bench ceiling, the HTTP limit
# of the box) in alternate rounds (--vs). Tunables: see bench/lib.sh.
source "$(dirname "$0")/lib.sh"
PARTS=${PARTS:-all scaleout} # which parts to run

# standard URL: populate, then stat (HEAD, PROPFIND) against the ceiling,
# list, and the get/put sweep of small sizes.
standard() {
	local url=$1 layout=(--prefix /bench/tree --files "$FILES" --dirs "$DIRS")
	figure "populate $FILES files in $DIRS directories" populate --url "$url" "${layout[@]}" -c 16
	figure "stat HEAD vs ceiling" stat --url "$url" --vs "$CEILING" "${layout[@]}" -c "$CONC" --rounds "$ROUNDS" --round-duration "$ROUND"
	figure "stat PROPFIND Depth 0 vs ceiling" stat --method PROPFIND --url "$url" --vs "$CEILING" "${layout[@]}" -c "$CONC" --rounds "$ROUNDS" --round-duration "$ROUND"
	figure "list (PROPFIND Depth 1, $((FILES / DIRS)) entries)" list --url "$url" "${layout[@]}" -c 4 -d "$PHASE"
	figure "get/put sweep" sweep get put --url "$url" --sizes "$SWEEP_SIZES" -c 4 -d 2s --warmup 500ms
}

results_file
md "# shoal bench — $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s)" ""
machine
md "" "Each figure below is the output of the \`shoal bench\` command shown, run by bench/suite.sh." \
	"\`--vs\` runs alternate rounds against the two targets; A/B is the ratio of their req/s."
start_ceiling

# 1. shoal all
md "" "## Embedded default: shoal all (SQLite, in-process cache)"
if [[ " $PARTS " != *" all "* ]]; then
	md "not run (PARTS=$PARTS)"
elif "$SHOAL" all --help >/dev/null 2>&1; then
	PORT=$(free_port)
	start all "$SHOAL" all --data "$TMP/all" --listen "127.0.0.1:$PORT" --disk-listen "127.0.0.1:$(free_port)"
	if wait_port "$PORT"; then
		standard "http://127.0.0.1:$PORT"
	else
		md "shoal all did not start:" '```' "$(tail -n 20 "$TMP/all.log")" '```'
	fi
else
	echo "this shoal has no 'all' mode: skipped"
	md "skipped: this shoal binary has no \`all\` mode"
fi

# 2. scale-out
md "" "## Scale-out: MariaDB + memcached + two shoal md + one shoal disk"
SKIP=""
skip() {
	SKIP=$1
	echo "scale-out skipped: $1"
	return 1
}
scaleout() {
	if ! command -v mariadbd >/dev/null && [[ ! -x /usr/sbin/mariadbd ]]; then skip "mariadbd not installed"; return 1; fi
	if ! command -v memcached >/dev/null; then skip "memcached not installed"; return 1; fi
	if ! "$SHOAL" md --help 2>/dev/null | grep -q -- --catalog || ! "$SHOAL" disk --help >/dev/null 2>&1; then
		skip "this shoal has no md/disk modes"
		return 1
	fi
	local mdb=${MARIADBD:-$(command -v mariadbd || echo /usr/sbin/mariadbd)}
	local mport mcport p1 p2 pd me
	me=$(id -un)
	mport=$(free_port)
	mariadb-install-db --no-defaults --datadir="$TMP/mysql" --user="$me" --skip-test-db >"$TMP/install-db.log" 2>&1 ||
		{ skip "mariadb-install-db failed"; return 1; }
	start mariadb "$mdb" --no-defaults --datadir="$TMP/mysql" --socket="$TMP/mysql.sock" --port="$mport" \
		--bind-address=127.0.0.1 --user="$me" --skip-name-resolve --innodb-flush-log-at-trx-commit=2 --max-connections=500
	wait_port "$mport" 30 || { skip "mariadbd did not start"; return 1; }
	mariadb --no-defaults --socket="$TMP/mysql.sock" -uroot -e \
		"CREATE DATABASE shoal; CREATE USER 'shoal'@'127.0.0.1' IDENTIFIED BY 'shoal'; GRANT ALL ON shoal.* TO 'shoal'@'127.0.0.1';" ||
		{ skip "could not create the shoal database"; return 1; }
	mcport=$(free_port)
	start memcached memcached -l 127.0.0.1 -p "$mcport" -U 0 -m 256 -u "$me"
	wait_port "$mcport" || { skip "memcached did not start"; return 1; }
	echo "k1 $(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$TMP/secret"
	local dsn="mysql://shoal:shoal@127.0.0.1:$mport/shoal"
	p1=$(free_port)
	p2=$(free_port)
	pd=$(free_port)
	start md1 "$SHOAL" md --listen "127.0.0.1:$p1" --catalog "$dsn" --memcached "127.0.0.1:$mcport" --secret-file "$TMP/secret"
	wait_port "$p1" 30 || { skip "shoal md did not start: $(tail -n 3 "$TMP/md1.log")"; return 1; }
	start md2 "$SHOAL" md --listen "127.0.0.1:$p2" --catalog "$dsn" --memcached "127.0.0.1:$mcport" --secret-file "$TMP/secret"
	start disk "$SHOAL" disk --listen "127.0.0.1:$pd" --md "http://127.0.0.1:$p1" --data "$TMP/disk" --secret-file "$TMP/secret"
	wait_port "$p2" 30 && wait_port "$pd" 30 || { skip "shoal md/disk did not start: md2: $(tail -n 2 "$TMP/md2.log") disk: $(tail -n 2 "$TMP/disk.log")"; return 1; }
	sleep 1 # the data server's first heartbeat
	standard "http://127.0.0.1:$p1"
	figure "stat HEAD through the second md (same catalog and memcached)" stat --url "http://127.0.0.1:$p2" \
		--prefix /bench/tree --files "$FILES" --dirs "$DIRS" -c "$CONC" -d "$PHASE"
}
if [[ " $PARTS " != *" scaleout "* ]]; then
	md "not run (PARTS=$PARTS)"
elif ! scaleout; then
	md "skipped: $SKIP"
fi

echo "results: $OUT"
