package gw

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"strings"
	"testing"
	"time"

	"shoal/ec"
	"shoal/storetest"
	"shoal/wire"
)

// TestEC42Servers is issue 6's test over HTTP: ec:4+2 on six real
// diskservers behind a gw.Server; files of every edge size; every pair of
// servers stopped → byte-exact reads and ranges; three stopped → 503;
// a corrupt shard file → reconstructed, reported, repaired; after repair
// two other servers stopped lose nothing.
func TestEC42Servers(t *testing.T) {
	const stripe = 32 << 10
	c := startCluster(t, 6)
	_, gwURL := gateway(t, c, stripe)
	ids := c.IDs()
	url := func(method, id string) string {
		return wire.GatewayURL(c.Keys, gwURL, method, id, "", ec42, ids, time.Now().Add(time.Minute))
	}
	files := map[string][]byte{}
	for i, n := range sizes(stripe) {
		id := idFor(i)
		files[id] = storetest.Data(uint64(100+i), n)
		st, h, body := httpDo(t, "PUT", url("PUT", id), bytes.NewReader(files[id]), nil)
		if st != 201 {
			t.Fatalf("PUT %d bytes: %d %s", n, st, body)
		}
		if got := h.Get(wire.HeaderSize); got != fmt.Sprint(n) {
			t.Errorf("PUT %d bytes: size header %q", n, got)
		}
	}
	check := func(what string) {
		t.Helper()
		for id, want := range files {
			st, _, got := httpDo(t, "GET", url("GET", id), nil, nil)
			if st != 200 || !bytes.Equal(got, want) {
				t.Fatalf("%s: GET %s (%d bytes): %d, equal %v", what, id, len(want), st, bytes.Equal(got, want))
			}
			if len(want) < 3 {
				continue
			}
			lo, hi := int64(len(want)/3), int64(len(want)-2)
			st, h, got := httpDo(t, "GET", url("GET", id), nil, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", lo, hi)})
			if st != 206 || !bytes.Equal(got, want[lo:hi+1]) {
				t.Fatalf("%s: Range GET %s: %d, equal %v", what, id, st, bytes.Equal(got, want[lo:hi+1]))
			}
			if cr := h.Get("Content-Range"); cr != fmt.Sprintf("bytes %d-%d/%d", lo, hi, len(want)) {
				t.Errorf("Content-Range %q", cr)
			}
		}
	}
	check("all up")
	for _, p := range pairs(6) {
		c.Disks[p[0]].Stop()
		c.Disks[p[1]].Stop()
		check(fmt.Sprintf("servers %v down", p))
		c.Disks[p[0]].Start()
		c.Disks[p[1]].Start()
	}
	// Three down: 503, never wrong bytes.
	for _, i := range []int{1, 2, 4} {
		c.Disks[i].Stop()
	}
	for id, want := range files {
		if len(want) == 0 {
			continue
		}
		st, _, body := httpDo(t, "GET", url("GET", id), nil, nil)
		if st != 503 {
			t.Errorf("3 down: GET %s: %d %q, want 503", id, st, body)
		}
	}
	for _, i := range []int{1, 2, 4} {
		c.Disks[i].Start()
	}
	// Unsatisfiable range, HEAD.
	big := idFor(5)
	if st, h, _ := httpDo(t, "GET", url("GET", big), nil, map[string]string{"Range": "bytes=999999999-"}); st != 416 || h.Get("Content-Range") != fmt.Sprintf("bytes */%d", len(files[big])) {
		t.Errorf("unsatisfiable range: %d %q", st, h.Get("Content-Range"))
	}
	if st, h, _ := httpDo(t, "HEAD", url("GET", big), nil, nil); st != 200 || h.Get("Content-Length") != fmt.Sprint(len(files[big])) {
		t.Errorf("HEAD: %d, length %q", st, h.Get("Content-Length"))
	}
	// A malformed bytes range: 400 naming the Range, as diskserver and md
	// answer; another unit: ignored, the whole object.
	if st, _, body := httpDo(t, "GET", url("GET", big), nil, map[string]string{"Range": "bytes=5-2"}); st != 400 || !strings.Contains(string(body), "Range") {
		t.Errorf("malformed range: %d %q, want 400", st, body)
	}
	if st, _, got := httpDo(t, "GET", url("GET", big), nil, map[string]string{"Range": "items=0-1"}); st != 200 || !bytes.Equal(got, files[big]) {
		t.Errorf("foreign unit: %d with %d bytes, want 200 with all", st, len(got))
	}
	// Several ranges: multipart/byteranges read with ReadAt.
	n := int64(len(files[big]))
	st, h, got := httpDo(t, "GET", url("GET", big), nil, map[string]string{"Range": fmt.Sprintf("bytes=0-9, %d-%d, -3", n/2, n/2+stripe)})
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if st != 206 || err != nil || mt != "multipart/byteranges" {
		t.Fatalf("multi-range: %d, Content-Type %q", st, h.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(got), params["boundary"])
	for _, w := range [][2]int64{{0, 9}, {n / 2, n/2 + stripe}, {n - 3, n - 1}} {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %v: %v", w, err)
		}
		b, _ := io.ReadAll(p)
		if cr := p.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes %d-%d/%d", w[0], w[1], n) || !bytes.Equal(b, files[big][w[0]:w[1]+1]) {
			t.Errorf("part %v: Content-Range %q, %d bytes", w, cr, len(b))
		}
	}

	// Flip bytes in shard 2's file on disk: detected, reconstructed,
	// reported by Verify, repaired by Repair.
	chunk := int64(stripe / 4)
	flipBytes(t, shardFile(t, c.Disks[2].Dir, big), headerSize+3*(chunk+crcSize)+100, 8)
	check("shard 2 corrupt")
	s, err := ec.New(ec.Options{K: 4, M: 2, StripeSize: stripe, Shards: c.Remotes()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(t.Context(), big)
	if err != nil || len(rep.Bad()) != 1 || rep.Bad()[0] != 2 || rep.Shards[2].State != ec.ShardCorrupt {
		t.Fatalf("Verify: %+v, %v", rep, err)
	}
	rr, err := ec.Repair(t.Context(), s, big, nil)
	if err != nil || len(rr.Rebuilt) != 1 || rr.Rebuilt[0].Index != 2 || !rr.Rebuilt[0].InPlace {
		t.Fatalf("Repair: %+v, %v", rr, err)
	}
	if rep, err := s.Verify(t.Context(), big); err != nil || !rep.Healthy() {
		t.Fatalf("after repair: %+v, %v", rep, err)
	}
	c.Disks[0].Stop()
	c.Disks[5].Stop()
	check("after repair, servers 0 and 5 down")
	c.Disks[0].Start()
	c.Disks[5].Start()

	// DELETE removes every shard.
	if st, _, body := httpDo(t, "DELETE", url("DELETE", big), nil, nil); st != 204 {
		t.Fatalf("DELETE: %d %s", st, body)
	}
	for _, d := range c.Disks {
		if _, err := os.Stat(d.Dir); err == nil {
			shardGone(t, d.Dir, big)
		}
	}
	if st, _, _ := httpDo(t, "GET", url("GET", big), nil, nil); st != 404 {
		t.Errorf("GET after DELETE: %d, want 404", st)
	}
}

// shardGone fails if any file named id remains under dir.
func shardGone(t testing.TB, dir, id string) {
	t.Helper()
	var left []string
	walkFiles(dir, func(p string) {
		if strings.HasSuffix(p, "/"+id) || strings.Contains(p[len(dir):], "tmp/") {
			left = append(left, p)
		}
	})
	if len(left) > 0 {
		t.Errorf("left under %s: %v", dir, left)
	}
}
