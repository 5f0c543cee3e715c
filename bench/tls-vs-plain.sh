#!/usr/bin/env bash
# What TLS costs on the stat hot path: two `shoal all` on this box, one
# plain http, one `--tls` (its private CA), each populated with the same
# tree; then `shoal bench stat` HEAD and PROPFIND Depth 0 over keep-alive
# connections, the TLS node (--url) and the plain one (--vs) in alternating
# rounds of one run, and the same with a new connection per request
# (--new-conn: over https each request is a full TLS handshake, so its
# req/s is handshakes/s). Around each run it reads each server's CPU
# (utime+stime, /proc/PID/stat) and the requests md answered
# (shoal_http_requests_total), and prints the server CPU per request.
#
# AUTH=bearer or AUTH=basic: A also authenticates every request, with a
# bearer token (an RS256 key, JWKS file and WLCG token made here with
# openssl) or HTTP Basic (a user added with `shoal admin user add`), while
# B stays plain http without auth (bench --vs-anonymous).
#
# Usage: [RUN=N] bench/tls-vs-plain.sh   (env: CONC, ROUNDS, ROUND, FILES, DIRS; RUN names the results file)
# Defaults before lib.sh's, which keeps values already set.
ROUNDS=${ROUNDS:-6} ROUND=${ROUND:-3s} CONC=${CONC:-64}
source "$(dirname "$0")/lib.sh"
NEWCONN_CONC=${NEWCONN_CONC:-16}
AUTH=${AUTH:-}
results_file "tls${AUTH:+-$AUTH}${RUN:+-$RUN}"
md "# shoal bench — TLS vs plain HTTP${AUTH:+ ($AUTH)} — $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s)" ""
machine
md "" "Two \`shoal all\` on this box (SQLite, in-process cache): A = \`--tls\`${AUTH:+ with $AUTH auth on every request} (private CA, ECDSA P-256" \
	"certificate, TLS 1.3), B = plain http. \`--vs\` alternates rounds A, B, A, B… in one run;" \
	"A/B is the TLS/plain ratio of req/s. Server CPU per request = (utime+stime of the server" \
	"process, /proc/PID/stat) / (requests its md answered, shoal_http_requests_total), over the run" \
	"including warm-up."

# b64url: base64url without padding of stdin.
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }

auth=() tlsconf=()
case $AUTH in
bearer)
	iss=https://issuer.bench.example aud=https://shoal.bench.example now=$(date +%s)
	openssl genrsa -out "$TMP/issuer.key" 2048 2>/dev/null
	n=$(openssl rsa -in "$TMP/issuer.key" -noout -modulus | cut -d= -f2 | basenc --base16 -d | b64url)
	printf '{"keys":[{"kty":"RSA","kid":"bench","alg":"RS256","use":"sig","n":"%s","e":"AQAB"}]}' "$n" >"$TMP/issuer.jwks"
	head=$(printf '{"alg":"RS256","typ":"JWT","kid":"bench"}' | b64url)
	claims=$(printf '{"iss":"%s","sub":"bench","aud":"%s","iat":%d,"nbf":%d,"exp":%d,"jti":"bench-%d","wlcg.ver":"1.0","scope":"storage.read:/ storage.create:/ storage.modify:/"}' \
		"$iss" "$aud" "$now" "$now" $((now + 4 * 3600)) "$now" | b64url)
	sig=$(printf '%s.%s' "$head" "$claims" | openssl dgst -sha256 -sign "$TMP/issuer.key" | b64url)
	auth=(--token "$head.$claims.$sig" --vs-anonymous)
	printf 'auth:\n  issuers:\n    - {url: %s, jwks_file: %s}\n  audiences: [%s]\n' "$iss" "$TMP/issuer.jwks" "$aud" >"$TMP/a.yaml"
	tlsconf=(--config "$TMP/a.yaml")
	;;
basic)
	echo "bench password 1" | "$SHOAL" admin user add bench --users-file "$TMP/users" >/dev/null
	printf 'auth:\n  users_file: %s\n  rules:\n    - {path: /, who: "user:bench", rights: [read, create, modify]}\n' "$TMP/users" >"$TMP/a.yaml"
	auth=(-u "bench:bench password 1" --vs-anonymous)
	tlsconf=(--config "$TMP/a.yaml")
	;;
"") ;;
*) echo "AUTH must be bearer or basic" >&2; exit 1 ;;
esac

# start_all NAME EXTRA...: a `shoal all` on a free port; sets URL_NAME, PID_NAME.
# A port free a moment ago may be taken by the time shoal binds it (the
# box is shared): then it tries another.
start_all() {
	local name=$1 port pid i try
	shift
	for ((try = 0; try < 5; try++)); do
		port=$(free_port)
		start "$name" "$SHOAL" all --data "$TMP/$name" --listen "127.0.0.1:$port" --disk-listen 127.0.0.1:0 "$@"
		pid=${PIDS[-1]}
		for ((i = 0; i < 300; i++)); do
			grep -q '^ready' "$TMP/$name.log" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		grep -q '^ready' "$TMP/$name.log" && break
		grep -q 'address already in use' "$TMP/$name.log" || break
	done
	grep -q '^ready' "$TMP/$name.log" || { cat "$TMP/$name.log" >&2; exit 1; }
	printf -v "URL_$name" '%s' "$(awk '$1 == "md" {sub(/\/$/, "", $2); print $2}' "$TMP/$name.log")"
	printf -v "PID_$name" '%s' "$pid"
}
start_all tls --tls "${tlsconf[@]}"
start_all plain
CA=$TMP/tls/tls/ca.pem
TLS=$URL_tls PLAIN=$URL_plain
md "" "- A: $TLS (certificate sha256 $(awk '$1 == "sha256" {print $2}' "$TMP/tls.log"))" "- B: $PLAIN"

HZ=$(getconf CLK_TCK)
# cpu PID: the process's user+system CPU so far, in clock ticks.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# answered URL: the requests md at URL has answered so far.
answered() {
	curl -sS --cacert "$CA" "$1/.shoal/metrics" |
		awk '/^shoal_http_requests_total\{/ && /component="md"/ {n += $NF} END {printf "%d\n", n}'
}

# measured TITLE ARGS...: `figure` with the servers' CPU per request after it.
measured() {
	local title=$1 c0a c0b n0a n0b c1a c1b n1a n1b
	shift
	c0a=$(cpu "$PID_tls") c0b=$(cpu "$PID_plain") n0a=$(answered "$TLS") n0b=$(answered "$PLAIN")
	figure "$title" "$@"
	c1a=$(cpu "$PID_tls") c1b=$(cpu "$PID_plain") n1a=$(answered "$TLS") n1b=$(answered "$PLAIN")
	local line
	line=$(printf 'server CPU per request: A (TLS) %.2f µs over %d requests; B (plain) %.2f µs over %d requests; A/B %.2f' \
		"$(echo "($c1a - $c0a) * 1000000 / $HZ / ($n1a - $n0a)" | bc -l)" $((n1a - n0a)) \
		"$(echo "($c1b - $c0b) * 1000000 / $HZ / ($n1b - $n0b)" | bc -l)" $((n1b - n0b)) \
		"$(echo "(($c1a - $c0a) / ($n1a - $n0a)) / (($c1b - $c0b) / ($n1b - $n0b))" | bc -l)")
	echo "   $line"
	md "" "$line"
}

layout=(--prefix /bench/tree --files "$FILES" --dirs "$DIRS")
figure "populate A (TLS)" populate --url "$TLS" --cacert "$CA" "${layout[@]}" -c 16 "${auth[@]}"
figure "populate B (plain)" populate --url "$PLAIN" "${layout[@]}" -c 16
vs=(--url "$TLS" --cacert "$CA" --vs "$PLAIN" "${layout[@]}" --rounds "$ROUNDS" --round-duration "$ROUND" "${auth[@]}")
measured "HEAD, keep-alive, TLS vs plain" stat "${vs[@]}" -c "$CONC"
measured "PROPFIND Depth 0, keep-alive, TLS vs plain" stat --method PROPFIND "${vs[@]}" -c "$CONC"
measured "HEAD, a new connection per request (A: a full TLS handshake each)" stat "${vs[@]}" -c "$NEWCONN_CONC" --new-conn
echo "results in $OUT"
