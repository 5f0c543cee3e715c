#!/usr/bin/env bash
# make bench-writes: files created per second, side by side in one run, by
# shoal all (SQLite) and by MariaDB + memcached + two shoal md (one port,
# --reuseport) + one shoal disk, each against nginx with WebDAV on the same
# box (bench/nginx-dav.conf) in alternate rounds (--vs); then shoal at one
# connection, for the c=16 / c=1 scaling. With BASE=path/to/other/shoal
# the same workloads also run shoal against that binary's shoal all
# (before/after in one run). Written to bench/results/<date>-<host>-writes.md.
# Tunables: SIZES (0,16k,1m) CONC (16) ROUNDS (5) ROUND (2s) PARTS (all scaleout;
# also ceiling: shoal all and nginx against `shoal bench ceiling --backend disk`).
# FRESH_FS=1 (root, mkfs.ext4): every server's data (nginx's root, shoal's
# data and catalog, MariaDB's) goes on a new ext4 made for the run on a
# loop device (FRESH_FS_SIZE, 8G; FRESH_FS_MKFS: more mkfs.ext4 options,
# e.g. "-O ^has_journal"), so that all start from the same empty
# filesystem: on a long-used one creating a file gets slower with every
# file deleted before (ext4's inode allocation), which nginx pays for every
# create and shoal's inline files do not. Not the default: the loop device
# makes every fsync dearer, which shoal pays for every create and nginx
# does not. The results file says which.
source "$(dirname "$0")/lib.sh"
SIZES=${SIZES:-0,16k,1m}
PARTS=${PARTS:-all scaleout}
BASE=${BASE:-}
FRESH_FS=${FRESH_FS:-0}
DATA=$TMP
if [[ $FRESH_FS == 1 ]]; then
	truncate -s "${FRESH_FS_SIZE:-8G}" "$TMP/fs.img"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 ${FRESH_FS_MKFS:-} "$TMP/fs.img"
	mkdir "$TMP/fs"
	mount -o loop "$TMP/fs.img" "$TMP/fs"
	DATA=$TMP/fs
	fresh_cleanup() {
		stop_servers
		umount "$TMP/fs" 2>/dev/null || true
		cleanup
	}
	trap fresh_cleanup EXIT INT TERM
fi

results_file writes
md "# shoal bench writes — $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s)" ""
machine
if [[ $FRESH_FS == 1 ]]; then
	md "" "Every server's data on a new ext4 made for this run on a loop device (FRESH_FS=1, ${FRESH_FS_SIZE:-8G}${FRESH_FS_MKFS:+, mkfs.ext4 $FRESH_FS_MKFS})."
else
	md "" "Every server's data in $TMP: $(df -T "$TMP" | awk 'NR==2 {print $2 " on " $1}') (FRESH_FS=0)."
fi
md "" "Files created per second (\`shoal bench files\`: PUT of new files, redirects followed, every 201 counted)." \
	"\`--vs\` alternates rounds between the two targets over the same connections; A/B is the ratio of their rates." \
	"\`--sync-rounds\`: the machine's dirty pages are written back (sync(2), unmeasured) before the first round and after every round, so that what nginx wrote without an fsync is not written back during shoal's rounds." \
	"nginx (worker_processes auto, bench/nginx-dav.conf) does not fsync; every shoal 201 is durable."

if ! command -v nginx >/dev/null || [[ ! -f /usr/lib/nginx/modules/ngx_http_dav_ext_module.so ]]; then
	md "" "nginx with WebDAV is not installed (apt-get install nginx libnginx-mod-http-dav-ext)."
	exit 1
fi
NGINX_PORT=$(free_port)
mkdir -p "$DATA/nginx/root"
user=""
[[ $(id -u) == 0 ]] && user="user root;"
sed -e "s|@USER@|$user|" -e "s|@WORKERS@|auto|" -e "s|@TMP@|$DATA/nginx|g" -e "s|@ROOT@|$DATA/nginx/root|" \
	-e "s|@LISTEN@|127.0.0.1:$NGINX_PORT|" -e "s|@ACCESS_LOG@|off|" bench/nginx-dav.conf >"$DATA/nginx/nginx.conf"
start nginx nginx -p "$DATA/nginx" -c "$DATA/nginx/nginx.conf" -e "$DATA/nginx/error.log" -g "daemon off;"
wait_port "$NGINX_PORT"
NGINX="http://127.0.0.1:$NGINX_PORT"

vs=(--rounds "$ROUNDS" --round-duration "$ROUND" --warmup 500ms --sync-rounds)

# tidy [SHOAL_URL…]: removes what a figure created (every round creates
# new files), so that a run does not fill the disk: nginx's and the disk
# ceiling's files at once, shoal's with a DELETE of /bench (its garbage
# collection frees their space later).
tidy() {
	rm -rf "$DATA/nginx/root/bench"
	if [[ -d $DATA/ceiling ]]; then find "$DATA/ceiling" -maxdepth 1 -name 'put-*' -delete; fi
	local u
	for u in "$@"; do curl -s -o /dev/null -X DELETE "$u/bench/" || true; done
}

# writes URL LABEL: c=CONC against nginx, then c=1 against nginx.
writes() {
	local url=$1 label=$2
	figure "$label vs nginx, c=$CONC" files --url "$url" --vs "$NGINX" --sizes "$SIZES" -c "$CONC" "${vs[@]}"
	tidy "$url"
	figure "$label vs nginx, c=1" files --url "$url" --vs "$NGINX" --sizes "$SIZES" -c 1 "${vs[@]}"
	tidy "$url"
}

if [[ " $PARTS " == *" all "* ]]; then
	md "" "## shoal all (SQLite catalog, in-process cache, one data server)"
	PORT=$(free_port)
	start all "$SHOAL" all --data "$DATA/all" --listen "127.0.0.1:$PORT" --disk-listen "127.0.0.1:$(free_port)"
	wait_port "$PORT" 30
	sleep 1 # the data server's first heartbeat
	writes "http://127.0.0.1:$PORT" "shoal all"
	if [[ -n $BASE ]]; then
		# Two new instances: the one above holds every file of the nginx
		# runs. Used against a new BASE, the same build came out 0.74-0.80
		# at 16 KiB; both new, 0.90-1.08 over five runs.
		NPORT=$(free_port)
		start this "$SHOAL" all --data "$DATA/this" --listen "127.0.0.1:$NPORT" --disk-listen "127.0.0.1:$(free_port)"
		BPORT=$(free_port)
		start base "$BASE" all --data "$DATA/base" --listen "127.0.0.1:$BPORT" --disk-listen "127.0.0.1:$(free_port)"
		wait_port "$NPORT" 30
		wait_port "$BPORT" 30
		sleep 1
		md "" "## this shoal all against BASE's shoal all ($("$BASE" version 2>/dev/null | head -n1)), both new"
		figure "shoal all vs BASE shoal all, c=$CONC" files --url "http://127.0.0.1:$NPORT" --vs "http://127.0.0.1:$BPORT" \
			--sizes "$SIZES" -c "$CONC" "${vs[@]}"
		tidy "http://127.0.0.1:$NPORT" "http://127.0.0.1:$BPORT"
	fi
fi

if [[ " $PARTS " == *" ceiling "* ]]; then
	# The disk ceiling (`shoal bench ceiling --backend disk`): every PUT a
	# durable file of its own and nothing else. Against it, shoal all (new)
	# and nginx, each at CONC and at 1 connection.
	md "" "## shoal all and nginx against the disk ceiling (every PUT a new file, fsync'd, its directory fsync'd)"
	CPORT=$(free_port)
	start ceiling "$SHOAL" bench ceiling --backend disk --dir "$DATA/ceiling" --listen "127.0.0.1:$CPORT"
	wait_port "$CPORT" 30
	CEILING="http://127.0.0.1:$CPORT"
	APORT=$(free_port)
	start ceilall "$SHOAL" all --data "$DATA/ceilall" --listen "127.0.0.1:$APORT" --disk-listen "127.0.0.1:$(free_port)"
	wait_port "$APORT" 30
	sleep 1
	for c in "$CONC" 1; do
		figure "shoal all vs disk ceiling, c=$c" files --url "http://127.0.0.1:$APORT" --vs "$CEILING" --sizes "$SIZES" -c "$c" "${vs[@]}"
		tidy "http://127.0.0.1:$APORT"
		figure "nginx vs disk ceiling, c=$c" files --url "$NGINX" --vs "$CEILING" --sizes "$SIZES" -c "$c" "${vs[@]}"
		tidy
	done
fi

if [[ " $PARTS " == *" scaleout "* ]]; then
	md "" "## MariaDB (innodb_flush_log_at_trx_commit=1) + memcached + two shoal md on one port + one shoal disk"
	mdb=${MARIADBD:-$(command -v mariadbd || echo /usr/sbin/mariadbd)}
	me=$(id -un)
	mport=$(free_port)
	mariadb-install-db --no-defaults --datadir="$DATA/mysql" --user="$me" --skip-test-db >"$TMP/install-db.log" 2>&1
	start mariadb "$mdb" --no-defaults --datadir="$DATA/mysql" --socket="$TMP/mysql.sock" --port="$mport" \
		--bind-address=127.0.0.1 --user="$me" --skip-name-resolve --innodb-flush-log-at-trx-commit=1 \
		--innodb-buffer-pool-size=256M --max-connections=500
	wait_port "$mport" 30
	mariadb --no-defaults --socket="$TMP/mysql.sock" -uroot -e \
		"CREATE DATABASE shoal; CREATE USER 'shoal'@'127.0.0.1' IDENTIFIED BY 'shoal'; GRANT ALL ON shoal.* TO 'shoal'@'127.0.0.1';"
	mcport=$(free_port)
	start memcached memcached -l 127.0.0.1 -p "$mcport" -U 0 -m 256 -u "$me"
	wait_port "$mcport"
	echo "k1 $(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$TMP/secret"
	dsn="mysql://shoal:shoal@127.0.0.1:$mport/shoal"
	p=$(free_port)
	pd=$(free_port)
	start md1 "$SHOAL" md --listen "127.0.0.1:$p" --reuseport --catalog "$dsn" --memcached "127.0.0.1:$mcport" --secret-file "$TMP/secret"
	wait_port "$p" 30
	start md2 "$SHOAL" md --listen "127.0.0.1:$p" --reuseport --catalog "$dsn" --memcached "127.0.0.1:$mcport" --secret-file "$TMP/secret"
	start disk "$SHOAL" disk --listen "127.0.0.1:$pd" --md "http://127.0.0.1:$p" --data "$DATA/disk" --secret-file "$TMP/secret"
	wait_port "$pd" 30
	sleep 2 # md2 up, the data server's first heartbeat
	writes "http://127.0.0.1:$p" "MariaDB, 2 md"
fi

md "" "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
echo "results: $OUT"
