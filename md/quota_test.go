package md

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/internal/testsvc"
	"shoal/wire"
)

// quotaExact fails unless dir's quota counts exactly what dir holds (the
// sizes of its files, its entries) and what is reserved, and md reports
// the same quota-used-bytes.
func (e *env) quotaExact(what, dir string, reserved int64) shoal.Quota {
	e.t.Helper()
	ctx := context.Background()
	qs, err := e.db.QuotasFor(ctx, dir)
	if err != nil || len(qs) == 0 || qs[0].Dir != dir {
		e.t.Fatalf("%s: QuotasFor(%s) = %+v, %v", what, dir, qs, err)
	}
	q := qs[0]
	var bytes, files int64
	var walk func(string)
	walk = func(d string) {
		es, err := e.db.List(ctx, d)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, x := range es {
			files++
			bytes += x.Size
			if x.IsDir {
				walk(x.Path)
			}
		}
	}
	walk(dir)
	if q.UsedBytes != bytes || q.UsedFiles != files || q.Reserved != reserved {
		e.t.Errorf("%s: quota on %s = %+v; the tree holds %d bytes in %d entries, want %d reserved", what, dir, q, bytes, files, reserved)
	}
	r := e.do("PROPFIND", dir, map[string]string{"Depth": "0"}, []byte(quotaPropfind))
	if used := xmlInt(e.t, r.body, "quota-used-bytes"); used != bytes {
		e.t.Errorf("%s: quota-used-bytes of %s = %d, want %d", what, dir, used, bytes)
	}
	return q
}

// TestQuotaKeepsUsedExact: overwrites (inline and on a data server),
// DELETE, MOVE into, out of and across quotas, COPY and MKCOL keep the
// counters exact, as quota-used-bytes shows; what a quota cannot hold is
// a 507 with DAV:quota-not-exceeded and changes nothing; the quota
// properties cannot be PROPPATCHed.
func TestQuotaKeepsUsedExact(t *testing.T) {
	for _, mode := range []string{DataRedirect, DataProxy} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, mode)
			ctx := context.Background()
			for _, d := range []string{"/a", "/b", "/free"} {
				e.do("MKCOL", d, nil, nil).want(t, "MKCOL "+d, 201, "")
			}
			if _, err := e.db.SetQuota(ctx, "/a", 90_000, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := e.db.SetQuota(ctx, "/b", 30_000, 10); err != nil {
				t.Fatal(err)
			}
			check := func(what string) {
				t.Helper()
				e.quotaExact(what, "/a", 0)
				e.quotaExact(what, "/b", 0)
			}
			e.put("/a/big", make([]byte, 50_000)).want(t, "PUT data file", 201, "")
			e.put("/a/small", []byte("tiny")).want(t, "PUT inline file", 201, "")
			check("created")
			e.put("/a/big", make([]byte, 20_000)).want(t, "overwrite smaller", 204, "")
			e.put("/a/small", make([]byte, 3000)).want(t, "overwrite inline", 204, "")
			check("overwritten")

			// Over the limit: 507 with the RFC 4331 precondition, nothing made.
			before := e.snapshot()
			r := e.put("/a/huge", make([]byte, 80_000))
			r.want(t, "PUT over the quota", 507, "<D:quota-not-exceeded/>")
			if ct := r.h.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") || r.h.Get(wire.HeaderKind) != "quota exceeded" {
				t.Errorf("507: Content-Type %q, kind %q", ct, r.h.Get(wire.HeaderKind))
			}
			e.put("/a/big", make([]byte, 100_000)).want(t, "overwrite growing past the quota", 507, "quota-not-exceeded")
			if after := e.snapshot(); after != before {
				t.Errorf("refused PUTs changed the namespace or the disk:\n%s\n--- after:\n%s", before, after)
			}
			check("refused")

			// MOVE in, across, out; MOVE and COPY that do not fit.
			e.put("/free/f", make([]byte, 25_000)).want(t, "PUT outside quotas", 201, "")
			e.do("MOVE", "/free/f", map[string]string{"Destination": e.url + "/b/f"}, nil).want(t, "MOVE in", 201, "")
			check("moved in")
			e.do("MOVE", "/a/big", map[string]string{"Destination": e.url + "/b/big"}, nil).want(t, "MOVE over /b's quota", 507, "quota-not-exceeded")
			e.do("MOVE", "/b/f", map[string]string{"Destination": e.url + "/a/f"}, nil).want(t, "MOVE across", 201, "")
			check("moved across")
			e.do("COPY", "/a/f", map[string]string{"Destination": e.url + "/a/f2"}, nil).want(t, "COPY within", 201, "")
			check("copied")
			e.do("COPY", "/a/f", map[string]string{"Destination": e.url + "/a/f3"}, nil).want(t, "COPY over the quota", 507, "quota-not-exceeded")
			e.do("MOVE", "/a/f2", map[string]string{"Destination": e.url + "/free/f2"}, nil).want(t, "MOVE out", 201, "")
			check("moved out")
			e.do("DELETE", "/a/f", nil, nil).want(t, "DELETE", 204, "")
			check("deleted")

			// Entries: MKCOL and files count, the eleventh in /b is refused.
			for i := range 10 {
				e.do("MKCOL", "/b/d"+string(rune('a'+i)), nil, nil).want(t, "MKCOL", 201, "")
			}
			e.do("MKCOL", "/b/dz", nil, nil).want(t, "eleventh entry", 507, "quota-not-exceeded")
			e.put("/b/f", []byte("x")).want(t, "eleventh entry (file)", 507, "quota-not-exceeded")
			e.do("DELETE", "/b/da", nil, nil).want(t, "DELETE", 204, "")
			check("entries")

			// The quota properties are protected.
			r = e.do("PROPPATCH", "/a", nil, []byte(`<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:quota-available-bytes>1</D:quota-available-bytes></D:prop></D:set></D:propertyupdate>`))
			if r.status != 207 || !strings.Contains(r.body, "403") || !strings.Contains(r.body, "<D:cannot-modify-protected-property/>") {
				t.Errorf("PROPPATCH of quota-available-bytes: %d %s", r.status, r.body)
			}
			// Available: the quota's room, under the pool's free space.
			q := e.quotaExact("end", "/a", 0)
			avail := xmlInt(t, e.do("PROPFIND", "/a", map[string]string{"Depth": "0"}, []byte(quotaPropfind)).body, "quota-available-bytes")
			if avail != q.Bytes-q.UsedBytes {
				t.Errorf("quota-available-bytes of /a = %d, want %d", avail, q.Bytes-q.UsedBytes)
			}
			free := xmlInt(t, e.do("PROPFIND", "/free", map[string]string{"Depth": "0"}, []byte(quotaPropfind)).body, "quota-available-bytes")
			if free <= avail {
				t.Errorf("quota-available-bytes outside quotas = %d, want the pool's free space", free)
			}
		})
	}
}

// TestQuotaReservations: a PUT's reservation holds room before any byte
// moves, and comes back when the upload fails: at once when the data
// server sees it fail (a client that dies mid-upload, a body longer than
// declared, a chunked body cut at what the quota had left: the data
// server tells md), after the upload's expiry when nothing is heard of it
// (a client that never sends its body).
func TestQuotaReservations(t *testing.T) {
	// The data server heartbeats every second: a ServerTTL of 3 s keeps
	// it live under emulation too.
	e := newEnv(t, DataRedirect, func(o *Options) {
		o.URLTTL, o.ServerTTL, o.UploadTTL = time.Second, 3*time.Second, 2*time.Second
	})
	ctx := context.Background()
	e.do("MKCOL", "/q", nil, nil).want(t, "MKCOL", 201, "")
	if _, err := e.db.SetQuota(ctx, "/q", 100_000, 0); err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"Expect": "100-continue"}
	waitReserved := func(what string, want int64) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			qs, _ := e.db.QuotasFor(ctx, "/q")
			if len(qs) == 1 && qs[0].Reserved == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: reserved %+v 15 s later, want %d", what, qs, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// A header-only PUT: 60,000 bytes held, so the next 50,000 do not fit.
	e.do("PUT", "/q/never", hdr, make([]byte, 60_000)).want(t, "header-only PUT", 307, "")
	e.quotaExact("reserved", "/q", 60_000)
	e.do("PUT", "/q/other", hdr, make([]byte, 50_000)).want(t, "PUT beside the reservation", 507, "quota-not-exceeded")

	// A client that dies half-way through its body: the data server's
	// upload fails and it tells md, which gives the 30,000 back.
	loc := e.do("PUT", "/q/dies", hdr, make([]byte, 30_000)).h.Get("Location")
	e.quotaExact("two reservations", "/q", 90_000)
	dieMidUpload(t, loc, 30_000, 10_000)
	waitReserved("client died", 60_000)

	// The body that never came: its reservation expires (URLTTL +
	// ServerTTL) and md's expiry loop gives it back. Nothing of either is
	// visible.
	waitReserved("expired", 0)
	e.quotaExact("expired", "/q", 0)
	for _, p := range []string{"/q/never", "/q/dies"} {
		e.do("HEAD", p, nil, nil).want(t, "HEAD "+p, 404, "")
	}

	// A body longer than the Content-Length md reserved: the data server
	// refuses it (413), the commit never happens, the room is back.
	r := e.do("PUT", "/q/liar", hdr, make([]byte, 10_000))
	r.want(t, "PUT of the liar", 307, "")
	loc = r.h.Get("Location")
	req, _ := http.NewRequest("PUT", loc, bytes.NewReader(make([]byte, 15_000)))
	res, err := e.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 413 {
		t.Errorf("a body longer than reserved: %d, want 413", res.StatusCode)
	}
	e.quotaExact("refused body", "/q", 0)

	// Chunked: the reservation is what the quota has left, and the data
	// server cuts the body there.
	e.put("/q/fill", make([]byte, 40_000)).want(t, "PUT", 201, "")
	chunked := func(path string, n int) resp {
		t.Helper()
		r, loc := e.putChunked(path, make([]byte, n))
		if loc != "" && !strings.Contains(loc, "max=60000") {
			t.Errorf("chunked PUT redirected to %s, want the quota's room (max=60000)", loc)
		}
		return r
	}
	chunked("/q/toolong", 70_000).want(t, "chunked body past the quota's room", 413, "reserved")
	e.do("HEAD", "/q/toolong", nil, nil).want(t, "HEAD of the cut upload", 404, "")
	e.quotaExact("cut", "/q", 0)
	chunked("/q/fits", 50_000).want(t, "chunked body within the room", 201, "")
	e.quotaExact("chunked", "/q", 0)
}

// dieMidUpload sends half of a body of size bytes to url, then drops the
// connection.
func dieMidUpload(t *testing.T, url string, size, send int) {
	t.Helper()
	u := strings.TrimPrefix(url, "http://")
	host, path, _ := strings.Cut(u, "/")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = io.WriteString(conn, "PUT /"+path+" HTTP/1.1\r\nHost: "+host+"\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n")
	if err == nil {
		_, err = conn.Write(make([]byte, send))
	}
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the data server is receiving it
}

// TestQuotaPropsRealClients: curl and davix read quota-used-bytes and
// quota-available-bytes of a collection with a quota.
func TestQuotaPropsRealClients(t *testing.T) {
	curl := testsvc.NeedTool(t, "curl")
	davix := testsvc.NeedTool(t, "davix-http")
	e := newEnv(t, DataRedirect)
	e.do("MKCOL", "/home", nil, nil).want(t, "MKCOL", 201, "")
	if _, err := e.db.SetQuota(context.Background(), "/home", 1<<20, 0); err != nil {
		t.Fatal(err)
	}
	e.put("/home/f", make([]byte, 300_000)).want(t, "PUT", 201, "")
	want := []string{"<D:quota-used-bytes>300000</D:quota-used-bytes>", "<D:quota-available-bytes>748576</D:quota-available-bytes>"}
	for _, cmd := range [][]string{
		{curl, "-sS", "-X", "PROPFIND", "-H", "Depth: 0", "--data", quotaPropfind, e.url + "/home/"},
		{davix, "-X", "PROPFIND", "-H", "Depth: 0", "--data", quotaPropfind, e.url + "/home/"},
	} {
		out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", cmd[0], err, out)
			continue
		}
		for _, w := range want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: %s missing from\n%s", cmd[0], w, out)
			}
		}
	}
}
