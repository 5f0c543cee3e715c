#!/usr/bin/env bash
# bench/disk-limits.sh: what the disk under DIR (default: the bench's temp
# dir) does for writes that must be durable, with dd alone, so that a
# files-created-per-second figure can be read against it: its bandwidth
# with O_DIRECT (one stream, then four at once), buffered with one fsync at
# the end, and into the page cache alone; then the latency of a loop of
# synchronous writes (O_DSYNC: each write is durable when it returns) of
# 100 KiB (about a batch of the catalog's log) and of 128 KiB (about a
# pack's share), each alone and both at once: a disk that serves one flush
# at a time shows each one slower beside the other. Written to
# bench/results/<date>-<host>-disk-limits.md. Tunables: DIR, MB (2000),
# N (3000 writes a loop).
source "$(dirname "$0")/lib.sh"
DIR=${DIR:-$TMP}
MB=${MB:-2000}
F=$DIR/disk-limits.$$
trap 'rm -f "$F".*; cleanup' EXIT INT TERM

results_file disk-limits
md "# disk limits — $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s)" ""
machine
md "" "Files in $DIR: $(df -T "$DIR" | awk 'NR==2 {print $2 " on " $1}'); every file removed after its line." ""

# rate: dd's own summary line (bytes, seconds, rate).
rate() { dd "$@" 2>&1 | tail -n1; }
line() {
	echo "$1: $2"
	md "- $1: \`$2\`"
}

line "O_DIRECT, 1 MiB writes, one stream" "$(rate if=/dev/zero of="$F.a" bs=1M count="$MB" oflag=direct)"
rm -f "$F.a"
for i in 1 2 3 4; do
	rate if=/dev/zero of="$F.p$i" bs=1M count=$((MB / 4)) oflag=direct >"$F.out$i" &
done
wait
for i in 1 2 3 4; do line "O_DIRECT, 1 MiB writes, stream $i of 4 at once" "$(cat "$F.out$i")"; done
rm -f "$F".p* "$F".out*
line "buffered, one fsync at the end" "$(rate if=/dev/zero of="$F.b" bs=1M count="$MB" conv=fsync)"
rm -f "$F.b"
line "buffered, no fsync (page cache)" "$(rate if=/dev/zero of="$F.c" bs=1M count="$MB")"
rm -f "$F.c"
sync

# The loops: N synchronous writes each; µs per write from dd's seconds.
N=${N:-3000}
us() { awk -v n="$N" '{for (i = 1; i <= NF; i++) if ($i == "s,") {print int($(i-1) * 1e6 / n); exit}}'; }
loop() { dd if=/dev/zero of="$1" bs="$2" count="$N" oflag=dsync 2>&1 | tail -n1 | us; }
line "O_DSYNC loop of 100 KiB writes, alone (µs a write)" "$(loop "$F.w" 100k)"
line "O_DSYNC loop of 128 KiB writes, alone (µs a write)" "$(loop "$F.k" 128k)"
rm -f "$F.w" "$F.k"
loop "$F.w" 100k >"$F.ow" &
loop "$F.k" 128k >"$F.ok" &
wait
line "O_DSYNC loop of 100 KiB writes, beside the 128 KiB loop (µs a write)" "$(cat "$F.ow")"
line "O_DSYNC loop of 128 KiB writes, beside the 100 KiB loop (µs a write)" "$(cat "$F.ok")"
echo "results: $OUT"
