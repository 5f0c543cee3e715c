package ec

import (
	"encoding/binary"
	"fmt"
	"testing"

	"shoal/storetest"
)

// BenchmarkEncode measures what Create spends per stripe besides I/O:
// Reed-Solomon parity and the crc32c of every chunk, for 1 MiB stripes.
// Run with -cpu 1 for the figure per core (the coder is single-threaded).
func BenchmarkEncode(b *testing.B) {
	for _, l := range []struct{ k, m int }{{4, 2}, {8, 3}, {2, 1}} {
		b.Run(fmt.Sprintf("ec:%d+%d", l.k, l.m), func(b *testing.B) {
			enc, err := newEncoder(l.k, l.m)
			if err != nil {
				b.Fatal(err)
			}
			chunk := (DefaultStripeSize/l.k + chunkAlign - 1) / chunkAlign * chunkAlign
			shards := make([][]byte, l.k+l.m)
			for i := range shards {
				shards[i] = make([]byte, chunk+CRCSize)
				if i < l.k {
					copy(shards[i], storetest.Data(uint64(i), chunk))
				}
			}
			views := make([][]byte, len(shards))
			for i := range shards {
				views[i] = shards[i][:chunk]
			}
			b.SetBytes(int64(l.k * chunk))
			for b.Loop() {
				if err := enc.Encode(views); err != nil {
					b.Fatal(err)
				}
				for i := range shards {
					binary.LittleEndian.PutUint32(shards[i][chunk:], crc32c(views[i]))
				}
			}
		})
	}
}
