package gw

import (
	"net/http"
	"testing"

	"shoal/storetest"
)

// BenchmarkGet64KiB: GET of a 64 KiB ec:4+2 object (one partial stripe)
// through a gw.Server over six diskservers on loopback, one client
// connection. shard-reqs/op counts the requests the diskservers receive
// per GET (one Range GET per data shard, which reads the whole small
// shard; was 6 HEAD + 6 header + 6 footer reads + 4 chunk reads).
func BenchmarkGet64KiB(b *testing.B) {
	const size = 64 << 10
	cc := startCounted(b)
	cc.put(b, "b64", storetest.Gen(size), size)
	get := cc.url("GET", "b64")
	b.SetBytes(size)
	cc.counts()
	for b.Loop() {
		if err := benchGet(http.DefaultClient, get, size); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total(cc.counts()))/float64(b.N), "shard-reqs/op")
}
