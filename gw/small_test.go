package gw

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/diskserver"
	"shoal/ec"
	"shoal/internal/netguard"
	"shoal/internal/objhttp"
	"shoal/internal/testcluster"
	"shoal/storetest"
	"shoal/wire"
)

// counted is a cluster of six diskservers whose requests are counted per
// server, behind a gw.Server with the default stripe size.
type counted struct {
	c     *testcluster.Cluster
	reqs  []atomic.Int64 // by shard index
	sent  []atomic.Int64 // body bytes answered, by shard index
	gwURL string
}

func startCounted(tb testing.TB) *counted {
	tb.Helper()
	c := startCluster(tb, 6)
	cc := &counted{c: c, reqs: make([]atomic.Int64, 6), sent: make([]atomic.Int64, 6)}
	// Diskservers over the same data dirs, each in a server whose handler
	// counts.
	urls := map[string]string{}
	for i, d := range c.Disks {
		d.Stop() // one data server per data directory: this one takes over
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ds, err := diskserver.New(diskserver.Options{ID: d.ID, Dirs: []string{d.Dir}, Keys: d.Keys, PublicURL: "http://" + ln.Addr().String(), ReserveBytes: -1})
		if err != nil {
			tb.Fatal(err)
		}
		h := ds.Handler()
		hs := objhttp.NewHTTPServer(func(ctx *fasthttp.RequestCtx) {
			cc.reqs[i].Add(1)
			h(ctx)
			if n := ctx.Response.Header.ContentLength(); n > 0 && !ctx.IsHead() {
				cc.sent[i].Add(int64(n))
			}
		}, "ds", 1<<30, netguard.Defaults())
		go hs.Serve(ln)
		tb.Cleanup(func() { hs.Shutdown() })
		urls[d.ID] = "http://" + ln.Addr().String()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	cc.gwURL = "http://" + ln.Addr().String()
	srv, err := NewServer(ServerOptions{ID: "gw0", PublicURL: cc.gwURL, Keys: c.Keys, Servers: urls})
	if err != nil {
		tb.Fatal(err)
	}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return cc
}

func (cc *counted) url(method, id string) string {
	return wire.GatewayURL(cc.c.Keys, cc.gwURL, method, id, "", ec42, cc.c.IDs(), time.Now().Add(time.Hour))
}

func (cc *counted) put(tb testing.TB, id string, data io.Reader, size int64) {
	tb.Helper()
	st, _, body := httpDo(tb, "PUT", cc.url("PUT", id), data, nil)
	if st != 201 {
		tb.Fatalf("PUT %s (%d bytes): %d %s", id, size, st, body)
	}
}

// counts returns the requests each server received since the last call.
func (cc *counted) counts() []int64 {
	out := make([]int64, len(cc.reqs))
	for i := range cc.reqs {
		out[i] = cc.reqs[i].Swap(0)
	}
	return out
}

func total(xs []int64) (n int64) {
	for _, x := range xs {
		n += x
	}
	return n
}

// TestSmallGetRequests: a healthy small GET asks each data shard once and
// no parity shard; a corrupt data chunk brings in one parity shard, and a
// parity shard that disagrees with the others (a stale copy of another
// object) is not trusted: the next one is used, and with too few good
// shards the answer is 503, never wrong bytes.
func TestSmallGetRequests(t *testing.T) {
	cc := startCounted(t)
	data := storetest.Data(3, 64<<10)
	cc.put(t, "5a11", bytes.NewReader(data), int64(len(data)))
	cc.put(t, "07e4", bytes.NewReader(data[:1000]), 1000)
	cc.counts()
	get := func(what string) {
		t.Helper()
		st, _, got := httpDo(t, "GET", cc.url("GET", "5a11"), nil, nil)
		if st != 200 || !bytes.Equal(got, data) {
			t.Fatalf("%s: GET %d (%d bytes, equal %v), want 200 and the file", what, st, len(got), bytes.Equal(got, data))
		}
	}
	get("healthy")
	if n := cc.counts(); total(n) != 4 || n[4] != 0 || n[5] != 0 {
		t.Errorf("healthy small GET: shard requests %v, want one per data shard", n)
	}
	if st, h, _ := httpDo(t, "HEAD", cc.url("GET", "5a11"), nil, nil); st != 200 || h.Get("Content-Length") != "65536" {
		t.Errorf("HEAD: %d, length %q", st, h.Get("Content-Length"))
	}
	if n := cc.counts(); total(n) != 4 {
		t.Errorf("HEAD: shard requests %v, want 4", n)
	}

	dir := func(i int) string { return cc.c.Disks[i].Dir }
	flipBytes(t, shardFile(t, dir(2), "5a11"), headerSize+100, 2)
	get("data shard 2 corrupt")
	if n := cc.counts(); n[4] != 1 || n[5] != 0 {
		t.Errorf("one corrupt data chunk: shard requests %v, want parity shard 4 once, 5 never", n)
	}

	// Shard 4 replaced by shard 4 of another object: its header checks
	// out, its footer does not match the others.
	stale, err := os.ReadFile(shardFile(t, dir(4), "07e4"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shardFile(t, dir(4), "5a11"), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	get("data shard 2 corrupt, parity 4 stale")
	if n := cc.counts(); n[4] != 1 || n[5] != 1 {
		t.Errorf("stale parity 4: shard requests %v, want parity 4 and 5 once each", n)
	}
	// A third bad shard: 503 (a small body is read before the answer
	// starts), never wrong bytes.
	flipBytes(t, shardFile(t, dir(0), "5a11"), headerSize+7, 1)
	if st, _, body := httpDo(t, "GET", cc.url("GET", "5a11"), nil, nil); st != 503 {
		t.Fatalf("three bad shards: %d %q, want 503", st, body)
	}
}

// TestStripeRangesAcrossHead: one-stripe Range GETs of every stripe of a
// file whose shards are larger than the head read at open, so that some
// chunks lie in the head, one straddles its end and the rest are read from
// the data servers; all byte-exact.
func TestStripeRangesAcrossHead(t *testing.T) {
	c := startCluster(t, 6)
	f := newStreamFixture(t, c, nil)
	chunk := int64(streamStripe / 4)
	if shard := headerSize + 41*(chunk+crcSize); shard <= ec.HeadSize {
		t.Fatalf("shards of %d bytes fit in the head (%d): the test needs larger ones", shard, ec.HeadSize)
	}
	for st := int64(0); st*streamStripe < int64(len(f.data)); st++ {
		lo := st*streamStripe + 5
		hi := min(lo+streamStripe-9, int64(len(f.data))-1)
		f.get(t, fmt.Sprintf("stripe %d", st), lo, hi)
	}
}

// TestRangeDeepInLargeFile: a small Range far into a large file reads each
// data shard's header and footer and the one chunk it needs, not the whole
// stripe nor the heads that would hold the first stripe (4 × 256 KiB for
// ec:4+2); Ranges near the start (taken from those heads) and across two
// stripes read back right too.
func TestRangeDeepInLargeFile(t *testing.T) {
	cc := startCounted(t)
	data := storetest.Data(5, 8<<20+999) // 9 stripes of 1 MiB
	cc.put(t, "b16f", bytes.NewReader(data), int64(len(data)))
	sent := func() (n int64) {
		for i := range cc.sent {
			n += cc.sent[i].Swap(0)
		}
		return n
	}
	sent()
	for _, r := range []struct{ lo, hi int64 }{{6_000_000, 6_000_099}, {100, 199}, {1<<20 - 50, 1<<20 + 50}} {
		st, _, got := httpDo(t, "GET", cc.url("GET", "b16f"), nil, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", r.lo, r.hi)})
		if st != 206 || !bytes.Equal(got, data[r.lo:r.hi+1]) {
			t.Fatalf("Range %d-%d: %d, equal %v", r.lo, r.hi, st, bytes.Equal(got, data[r.lo:r.hi+1]))
		}
		// The chunk holding the bytes (256 KiB with its crc) and, per data
		// shard, a header and a footer; the whole stripe would be K chunks,
		// and heads read at open for nothing K × 256 KiB more.
		if max := int64(ec.DefaultStripeSize/4 + 64<<10); sent() > max && r.lo > ec.HeadSize*4 {
			t.Errorf("Range %d-%d: more than %d bytes read from the data servers", r.lo, r.hi, max)
		}
	}
	// Byte 6,000,000 is in stripe 5 at 757,120: chunk 2, on shard 2. With
	// that chunk corrupt the one-chunk read fails its crc and the stripe is
	// rebuilt from the others: still the right bytes.
	const chunk = ec.DefaultStripeSize / 4
	flipBytes(t, shardFile(t, cc.c.Disks[2].Dir, "b16f"), headerSize+5*(chunk+crcSize)+757_120-2*chunk, 3)
	cc.counts()
	st, _, got := httpDo(t, "GET", cc.url("GET", "b16f"), nil, map[string]string{"Range": "bytes=6000000-6000099"})
	if st != 206 || !bytes.Equal(got, data[6_000_000:6_000_100]) {
		t.Fatalf("Range over a corrupt chunk: %d, equal %v", st, bytes.Equal(got, data[6_000_000:6_000_100]))
	}
	if n := cc.counts(); n[4]+n[5] == 0 {
		t.Errorf("Range over a corrupt chunk: shard requests %v, want a parity shard read to rebuild the stripe", n)
	}
}
