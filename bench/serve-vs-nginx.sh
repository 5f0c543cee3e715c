#!/usr/bin/env bash
# The read side of issue 15, shoal all against nginx with WebDAV on one
# box, side by side in alternate rounds (--vs):
#   GET of 1 KiB, 64 KiB, 1 MiB and 128 MiB objects (and, with BEFORE=1,
#     the same for a second shoal all with all.local_data off: 302 + the
#     data server's answer, as before md served its own data);
#   PROPFIND Depth 0 with the allprop and davix bodies: req/s and each
#     server's CPU time per request (utime+stime from /proc over the run,
#     nginx master and workers summed, divided by the requests it answered);
#   PROPFIND Depth 1 of one directory of LIST_N files (populated in bulk):
#     time to first byte and to the end (curl), md's RSS growth over the
#     listing (VmHWM after - VmRSS before), entries/s of both.
# Usage: bench/serve-vs-nginx.sh   (env: ROUNDS ROUND CONC LIST_N BEFORE
# SIZES NGINX_WORKERS; LIST=0 or STAT=0 skip those parts; KEEP=1 keeps
# the temp dir)
source "$(dirname "$0")/lib.sh"
LIST_N=${LIST_N:-100000}
BEFORE=${BEFORE:-1}
SIZES=${SIZES:-1k 64k 1m 128m}
NGINX_WORKERS=${NGINX_WORKERS:-auto}
command -v nginx >/dev/null && [[ -f /usr/lib/nginx/modules/ngx_http_dav_ext_module.so ]] ||
	{ echo "apt-get install nginx libnginx-mod-http-dav-ext" >&2; exit 1; }

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
# nginx, as bench/compare.sh starts it (access log off, sendfile on).
NGINX_PORT=$(free_port)
mkdir -p "$TMP/nginx/root/list/d0000" "$TMP/nginx/root/stat"
user=""
[[ $(id -u) == 0 ]] && user="user root;"
sed -e "s|@USER@|$user|" -e "s|@WORKERS@|$NGINX_WORKERS|" -e "s|@TMP@|$TMP/nginx|g" -e "s|@ROOT@|$TMP/nginx/root|" \
	-e "s|@LISTEN@|127.0.0.1:$NGINX_PORT|" -e "s|@ACCESS_LOG@|off|" bench/nginx-dav.conf >"$TMP/nginx/nginx.conf"
python3 -c "
import os, sys
d = sys.argv[1]
for i in range(int(sys.argv[2])):
    open(os.path.join(d, 'f%07d' % i), 'w').close()
" "$TMP/nginx/root/list/d0000" "$LIST_N"
start nginx nginx -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/error.log" -g "daemon off;"
NGINX_PID=$!
wait_port "$NGINX_PORT"
NGINX="http://127.0.0.1:$NGINX_PORT"

# shoal all, its listing directory loaded in bulk before it starts.
mkdir -p "$TMP/all"
"$SHOAL" admin populate --quiet --catalog "sqlite:$TMP/all/catalog.db" --prefix /list --files "$LIST_N" --dirs 1 >/dev/null
PORT=$(free_port)
start all env SHOAL_LOG_ACCESS=false "$SHOAL" all --data "$TMP/all" --listen "127.0.0.1:$PORT" --disk-listen "127.0.0.1:$(free_port)" --log-level warn
SHOAL_PID=$!
wait_port "$PORT"
SHOAL_URL="http://127.0.0.1:$PORT"
sleep 1

rss() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; } # kB
# cpu PID: utime+stime in clock ticks of the process (and of its children
# processes for nginx: master and workers).
cpu() {
	local t=0 p
	for p in "$@" $(pgrep -P "$1" || true); do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	echo "$t"
}
HZ=$(getconf CLK_TCK)
# cpu_report JSON SHOAL_TICKS NGINX_TICKS WHAT: each server's CPU time per
# request over a --vs run (--json), from the ticks it used during the run.
cpu_report() {
	python3 - "$@" "$HZ" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
s, n, what, hz = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
a, v = rep["results"][0], rep["results"][1]
ua, uv = s / hz / a["count"] * 1e6, n / hz / v["count"] * 1e6
print(f"{what}: shoal {a['count']} requests, {s/hz:.2f} s CPU = {ua:.1f} µs/request; "
      f"nginx {v['count']} requests, {n/hz:.2f} s CPU = {uv:.1f} µs/request; shoal/nginx CPU per request {ua/uv:.2f}")
PY
}

if [[ ${LIST:-1} == 1 ]]; then
echo
echo "== PROPFIND Depth 1 of $LIST_N files (props body)"
body='<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:getetag/></D:prop></D:propfind>'
for t in shoal nginx; do
	url=$SHOAL_URL
	[[ $t == nginx ]] && url=$NGINX
	r0=$(rss "$SHOAL_PID" VmRSS)
	read -r ttfb total size < <(curl -sS -o /dev/null -X PROPFIND -H "Depth: 1" -H "Content-Type: application/xml" --data "$body" \
		-w '%{time_starttransfer} %{time_total} %{size_download}\n' "$url/list/d0000/")
	hwm=$(rss "$SHOAL_PID" VmHWM)
	printf '%-6s first byte %.3f s, last byte %.3f s, %d bytes' "$t" "$ttfb" "$total" "$size"
	[[ $t == shoal ]] && printf ', md RSS %d MiB before, peak %d MiB after: grew %.1f MiB' $((r0 / 1024)) $((hwm / 1024)) "$(echo "($hwm - $r0) / 1024" | bc -l)"
	echo
done
echo /list/d0000/ >"$TMP/listpaths"
"$SHOAL" bench list --url "$SHOAL_URL" --vs "$NGINX" --paths "$TMP/listpaths" --body props -c 1 \
	--rounds "${LIST_ROUNDS:-3}" --round-duration "${LIST_ROUND:-8s}" --warmup 0 -q | tee "$TMP/list.out"
echo "(entries/s = lists/s × $((LIST_N + 1)))"
fi

if [[ ${STAT:-1} == 1 ]]; then
echo
echo "== PROPFIND Depth 0 with a body: req/s and server CPU per request"
"$SHOAL" bench populate --url "$SHOAL_URL" --prefix /stat --files 100 --dirs 1 -c 4 -q >/dev/null
"$SHOAL" bench populate --url "$NGINX" --prefix /stat --files 100 --dirs 1 -c 4 -q >/dev/null
for b in allprop davix; do
	s0=$(cpu "$SHOAL_PID") n0=$(cpu "$NGINX_PID")
	"$SHOAL" bench stat --method PROPFIND --body "$b" --url "$SHOAL_URL" --vs "$NGINX" --prefix /stat --files 100 --dirs 1 \
		-c "${CONC:-16}" --rounds "${ROUNDS:-5}" --round-duration "${ROUND:-3s}" --warmup 0 -q --json "$TMP/stat-$b.json" | tee "$TMP/stat-$b.out"
	s1=$(cpu "$SHOAL_PID") n1=$(cpu "$NGINX_PID")
	cpu_report "$TMP/stat-$b.json" "$((s1 - s0))" "$((n1 - n0))" "PROPFIND $b"
done
fi

echo
echo "== GET (shoal all serving its own data) vs nginx"
for s in $SIZES; do
	c=${CONC:-16} rd=${ROUND:-3s}
	[[ $s == 128m ]] && c=2 rd=${BIG_ROUND:-6s}
	# the objects are written (and read once) by a first short run
	"$SHOAL" bench get --url "$SHOAL_URL" --vs "$NGINX" --size "$s" -c "$c" --rounds 1 --round-duration 200ms --warmup 0 -q >/dev/null
	s0=$(cpu "$SHOAL_PID") n0=$(cpu "$NGINX_PID")
	"$SHOAL" bench get --url "$SHOAL_URL" --vs "$NGINX" --size "$s" -c "$c" --rounds "${ROUNDS:-5}" --round-duration "$rd" --warmup 0 -q --json "$TMP/get-$s.json"
	s1=$(cpu "$SHOAL_PID") n1=$(cpu "$NGINX_PID")
	cpu_report "$TMP/get-$s.json" "$((s1 - s0))" "$((n1 - n0))" "GET $s"
done

if [[ $BEFORE == 1 ]]; then
	echo
	echo "== GET through the redirect (a second shoal all, all.local_data off) vs nginx"
	PORT2=$(free_port)
	start all2 env SHOAL_ALL_LOCAL_DATA=false SHOAL_LOG_ACCESS=false "$SHOAL" all --data "$TMP/all2" --listen "127.0.0.1:$PORT2" --disk-listen "127.0.0.1:$(free_port)" --log-level warn
	wait_port "$PORT2"
	sleep 1
	for s in $SIZES; do
		c=${CONC:-16} rd=${ROUND:-3s}
		[[ $s == 128m ]] && c=2 rd=${BIG_ROUND:-6s}
		"$SHOAL" bench get --url "http://127.0.0.1:$PORT2" --vs "$NGINX" --size "$s" -c "$c" --rounds "${ROUNDS:-5}" --round-duration "$rd" --warmup 500ms -q
	done
fi
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
