#!/usr/bin/env bash
# make bench-compare: the standard suite, in one run, against shoal all,
# nginx with WebDAV (Debian nginx + libnginx-mod-http-dav-ext, started
# here on loopback with a generated config) and the ceiling, side by side
# in alternate rounds (--vs). Written to bench/results/<date>-<host>-compare.md.
source "$(dirname "$0")/lib.sh"

NGINX_WORKERS=${NGINX_WORKERS:-auto}

results_file compare
md "# shoal bench compare — $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s)" ""
machine
md "" "shoal all (SQLite, in-process cache) against nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') with WebDAV" \
	"(worker_processes $NGINX_WORKERS, access log off, config: bench/nginx-dav.conf) and the ceiling" \
	"(shoal bench ceiling). \`--vs\` alternates rounds between the two targets; A/B is the ratio of their req/s."
start_ceiling

# nginx
if ! command -v nginx >/dev/null || [[ ! -f /usr/lib/nginx/modules/ngx_http_dav_ext_module.so ]]; then
	echo "nginx with WebDAV is not installed: apt-get install nginx libnginx-mod-http-dav-ext" >&2
	md "" "nginx with WebDAV is not installed (apt-get install nginx libnginx-mod-http-dav-ext): nothing to compare."
	exit 1
fi
NGINX_PORT=$(free_port)
mkdir -p "$TMP/nginx/root"
user=""
[[ $(id -u) == 0 ]] && user="user root;"
sed -e "s|@USER@|$user|" -e "s|@WORKERS@|$NGINX_WORKERS|" -e "s|@TMP@|$TMP/nginx|g" -e "s|@ROOT@|$TMP/nginx/root|" \
	-e "s|@LISTEN@|127.0.0.1:$NGINX_PORT|" -e "s|@ACCESS_LOG@|off|" bench/nginx-dav.conf >"$TMP/nginx/nginx.conf"
start nginx nginx -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/error.log" -g "daemon off;"
wait_port "$NGINX_PORT"
NGINX="http://127.0.0.1:$NGINX_PORT"

# shoal all, when this binary has it
SHOAL_URL=""
if "$SHOAL" all --help >/dev/null 2>&1; then
	PORT=$(free_port)
	start all "$SHOAL" all --data "$TMP/all" --listen "127.0.0.1:$PORT" --disk-listen "127.0.0.1:$(free_port)"
	if wait_port "$PORT"; then
		SHOAL_URL="http://127.0.0.1:$PORT"
	else
		md "" "shoal all did not start; nginx against the ceiling only." '```' "$(tail -n 20 "$TMP/all.log")" '```'
	fi
else
	md "" "This shoal binary has no \`all\` mode; nginx against the ceiling only."
fi

layout=(--prefix /bench/tree --files "$FILES" --dirs "$DIRS")
vs=(--rounds "$ROUNDS" --round-duration "$ROUND" -c "$CONC")
md "" "## Populate: $FILES files in $DIRS directories"
for url in $SHOAL_URL $NGINX; do
	figure "populate $url" populate --url "$url" "${layout[@]}" -c 16
done

md "" "## nginx against the ceiling"
figure "stat HEAD: nginx vs ceiling" stat --url "$NGINX" --vs "$CEILING" "${layout[@]}" "${vs[@]}"
figure "stat PROPFIND Depth 0: nginx vs ceiling" stat --method PROPFIND --url "$NGINX" --vs "$CEILING" "${layout[@]}" "${vs[@]}"

if [[ -n $SHOAL_URL ]]; then
	md "" "## shoal against nginx"
	figure "stat HEAD: shoal vs nginx" stat --url "$SHOAL_URL" --vs "$NGINX" "${layout[@]}" "${vs[@]}"
	figure "stat PROPFIND Depth 0: shoal vs nginx" stat --method PROPFIND --url "$SHOAL_URL" --vs "$NGINX" "${layout[@]}" "${vs[@]}"
	figure "list (PROPFIND Depth 1): shoal vs nginx" list --url "$SHOAL_URL" --vs "$NGINX" "${layout[@]}" --rounds 2 --round-duration 1s -c 4
	figure "get/put sweep: shoal vs nginx" sweep get put --url "$SHOAL_URL" --vs "$NGINX" --sizes "$SWEEP_SIZES" \
		--rounds 2 --round-duration 1s -c 4 --warmup 500ms
else
	figure "list (PROPFIND Depth 1): nginx" list --url "$NGINX" "${layout[@]}" -d "$PHASE" -c 4
	figure "get/put sweep: nginx vs ceiling" sweep get put --url "$NGINX" --vs "$CEILING" --sizes "$SWEEP_SIZES" \
		--rounds 2 --round-duration 1s -c 4 --warmup 500ms
fi

echo "results: $OUT"
