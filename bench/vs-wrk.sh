#!/usr/bin/env bash
# Is the generator the bottleneck? Alternates wrk and `shoal bench get`
# against the ceiling on the same box with the same connections (GET:
# Debian's wrk hangs on HEAD replies with a Content-Length), ROUNDS × SECS
# each, and reports both rates and the CPU each client spent per request.
# Usage: bench/vs-wrk.sh [ROUNDS] [SECS] [CONNECTIONS]
source "$(dirname "$0")/lib.sh"
rounds=${1:-6} secs=${2:-10} conns=${3:-64}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
start_ceiling
echo /x >"$TMP/paths"

# cpu sets CPU to the user+sys seconds of this shell's finished children
# (`times` must run in this shell: not in a pipe nor in $(…)).
cpu() {
	times >"$TMP/times"
	CPU=$(awk 'NR == 2 {gsub(/[ms]/, " "); print $1 * 60 + $2 + $3 * 60 + $4}' "$TMP/times")
}

tw=0 tb=0 cw=0 cb=0 nw=0 nb=0
for ((i = 1; i <= rounds; i++)); do
	cpu
	c0=$CPU
	# (not in $(…): a command substitution's children are not this shell's)
	wrk -t 2 -c "$conns" -d "${secs}s" "$CEILING/x" >"$TMP/wrk.out"
	cpu
	c1=$CPU
	out=$(cat "$TMP/wrk.out")
	w=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
	n=$(awk '/requests in/ {print $1}' <<<"$out")
	"$SHOAL" bench get --url "$CEILING" --paths "$TMP/paths" --size 128 -c "$conns" -d "${secs}s" --warmup 0 -q >"$TMP/bench.out"
	cpu
	c2=$CPU
	out=$(cat "$TMP/bench.out")
	b=$(awk '$1 == "get" {print $8}' <<<"$out")
	m=$(awk '$1 == "get" {print $5}' <<<"$out")
	printf 'round %d (load %s): wrk %s req/s (%.2f µs CPU/req), shoal bench %s req/s (%.2f µs CPU/req)\n' "$i" \
		"$(cut -d' ' -f1 /proc/loadavg)" "$w" "$(echo "($c1 - $c0) * 1000000 / $n" | bc -l)" \
		"$b" "$(echo "($c2 - $c1) * 1000000 / $m" | bc -l)"
	tw=$(echo "$tw + $w" | bc) tb=$(echo "$tb + $b" | bc)
	cw=$(echo "$cw + $c1 - $c0" | bc) cb=$(echo "$cb + $c2 - $c1" | bc)
	nw=$((nw + n)) nb=$((nb + m))
done
printf 'mean: wrk %.0f req/s, shoal bench %.0f req/s, ratio %.3f; CPU per request: wrk %.2f µs, shoal bench %.2f µs\n' \
	"$(echo "$tw / $rounds" | bc -l)" "$(echo "$tb / $rounds" | bc -l)" "$(echo "$tb / $tw" | bc -l)" \
	"$(echo "$cw * 1000000 / $nw" | bc -l)" "$(echo "$cb * 1000000 / $nb" | bc -l)"
