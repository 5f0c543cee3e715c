package gw

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shoal/internal/testcluster"
	"shoal/storetest"
	"shoal/wire"
)

// cutProxy forwards TCP connections to a data server and cuts every
// connection once the server has sent limit bytes on it: a shard stream
// that dies mid-way.
type cutProxy struct {
	ln    net.Listener
	cuts  atomic.Int32
	mu    sync.Mutex
	conns []net.Conn
}

func startCutProxy(t testing.TB, target string, limit int64) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				down.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, down, up)
			p.mu.Unlock()
			wg.Go(func() { io.Copy(up, down); up.Close() })
			wg.Go(func() {
				if n, _ := io.CopyN(down, up, limit); n == limit {
					p.cuts.Add(1)
				}
				down.Close()
				up.Close()
			})
		}
	})
	return p
}

func (p *cutProxy) URL() string { return "http://" + p.ln.Addr().String() }

// streamFixture: ec:4+2 over six real diskservers behind a gw.Server, with
// small stripes so that a file of a few hundred KiB has many.
type streamFixture struct {
	c     *testcluster.Cluster
	gwURL string
	data  []byte
	id    string
}

const streamStripe = 32 << 10 // chunks of 8 KiB

func newStreamFixture(t *testing.T, c *testcluster.Cluster, via map[string]string) *streamFixture {
	t.Helper()
	urls := c.URLs()
	for id, u := range via {
		urls[id] = u
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gwURL := "http://" + ln.Addr().String()
	srv, err := NewServer(ServerOptions{ID: "gw0", PublicURL: gwURL, Keys: c.Keys, StripeSize: streamStripe, Servers: urls})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	f := &streamFixture{c: c, gwURL: gwURL, data: storetest.Data(7, 40*streamStripe+777), id: "5ea7"}
	if st, _, body := httpDo(t, "PUT", f.url("PUT"), bytes.NewReader(f.data), nil); st != 201 {
		t.Fatalf("PUT: %d %s", st, body)
	}
	return f
}

func (f *streamFixture) url(method string) string {
	return wire.GatewayURL(f.c.Keys, f.gwURL, method, f.id, "", ec42, f.c.IDs(), time.Now().Add(time.Minute))
}

// get fetches the whole file, or [lo, hi] with hi ≥ 0, and checks it.
func (f *streamFixture) get(t *testing.T, what string, lo, hi int64) {
	t.Helper()
	want, hdr, status := f.data, map[string]string(nil), 200
	if hi >= 0 {
		want, hdr, status = f.data[lo:hi+1], map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", lo, hi)}, 206
	}
	st, _, got := httpDo(t, "GET", f.url("GET"), nil, hdr)
	if st != status || !bytes.Equal(got, want) {
		t.Fatalf("%s: GET [%d, %d]: %d, %d bytes, equal %v; want %d, %d bytes", what, lo, hi, st, len(got), bytes.Equal(got, want), status, len(want))
	}
}

// TestStreamShardCut: every connection to data shard 1's server is cut
// after 100 KiB (its stream is 320 KiB); GETs still return every byte,
// the stripes after the cut completed from the other shards.
func TestStreamShardCut(t *testing.T) {
	c := startCluster(t, 6)
	proxy := startCutProxy(t, c.Disks[1].Addr, 100<<10)
	f := newStreamFixture(t, c, map[string]string{c.Disks[1].ID: proxy.URL()})
	f.get(t, "shard 1 cut", 0, -1)
	if proxy.cuts.Load() == 0 {
		t.Fatal("the proxy never cut a connection: no shard stream went through it")
	}
	before := proxy.cuts.Load()
	f.get(t, "range, shard 1 cut", streamStripe/3, int64(len(f.data))-5000)
	if proxy.cuts.Load() == before {
		t.Error("the range GET's stream was not cut")
	}
}

// TestStreamCorruptChunks: chunks flipped on disk in data shards, one per
// stripe or two in the same stripe, are caught by their crc while
// streaming and reconstructed; three bad chunks in one stripe stop the
// body there: a short body, never wrong bytes.
func TestStreamCorruptChunks(t *testing.T) {
	c := startCluster(t, 6)
	f := newStreamFixture(t, c, nil)
	chunk := int64(streamStripe / 4)
	at := func(st, in int64) int64 { return headerSize + st*(chunk+crcSize) + in }
	flip := func(shard int, st, in int64, n int) {
		flipBytes(t, shardFile(t, c.Disks[shard].Dir, f.id), at(st, in), n)
	}
	flip(0, 3, 10, 4)
	flip(2, 10, chunk-1, 1)
	flip(2, 11, chunk, 2) // the crc itself
	flip(3, 40, 0, 8)     // the last, short stripe
	flip(0, 20, 100, 3)   // two bad chunks in stripe 20
	flip(1, 20, 200, 3)
	f.get(t, "corrupt chunks", 0, -1)
	f.get(t, "range over corrupt chunks", 3*streamStripe+5, 21*streamStripe)

	flip(3, 25, 0, 1) // with a parity chunk: three bad in stripe 25
	flip(5, 25, 0, 1)
	flip(0, 25, 0, 1)
	resp, err := http.Get(f.url("GET"))
	if err != nil {
		t.Fatal(err)
	}
	got, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == 200 && rerr == nil && len(got) == len(f.data) {
		t.Fatalf("three bad chunks in a stripe: a full body (equal %v), want a short one", bytes.Equal(got, f.data))
	}
	if !bytes.Equal(got, f.data[:min(len(got), len(f.data))]) {
		t.Fatalf("three bad chunks in a stripe: %d bytes sent, not a prefix of the file", len(got))
	}
	if int64(len(got)) > 25*streamStripe {
		t.Errorf("%d bytes sent, past the start of the bad stripe 25", len(got))
	}
}
