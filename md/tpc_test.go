package md

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"shoal/internal/tpcpeer"
	"shoal/storetest"
	"shoal/tpc"
)

// copyFollow sends a COPY to path with hdr, follows md's 307 (the headers
// sent again, as davix does) and reads the marker stream. It returns the
// first answer's status and Location, and the stream's outcome.
func (e *env) copyFollow(path string, hdr map[string]string) (int, string, tpc.Outcome) {
	e.t.Helper()
	r := e.do("COPY", path, hdr, nil)
	first, loc := r.status, r.h.Get("Location")
	switch r.status {
	case http.StatusTemporaryRedirect:
	case http.StatusAccepted: // md did the copy itself
		out, err := tpc.ReadStream(strings.NewReader(r.body), nil)
		if err != nil || r.h.Get("Content-Type") != "text/plain" {
			e.t.Fatalf("COPY %s: %q %v", path, r.h.Get("Content-Type"), err)
		}
		return first, "", out
	default:
		return r.status, "", tpc.Outcome{}
	}
	u := loc
	req, _ := http.NewRequest("COPY", u, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := e.http.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusAccepted || res.Header.Get("Content-Type") != "text/plain" {
		b, _ := io.ReadAll(res.Body)
		e.t.Fatalf("COPY %s: %d %q %s", u, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	out, err := tpc.ReadStream(res.Body, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return first, loc, out
}

// TestTPCPull: a COPY with Source is a PUT of its path as far as md is
// concerned (parent, collection, Overwrite: F, 412 before anything
// starts); md learns the source's size (a HEAD), reserves and answers 307
// to the data server with a URL signed for this copy; the data server
// pulls, checks the digest and commits: the file reads back with the
// source's bytes and checksums.
func TestTPCPull(t *testing.T) {
	e := newEnv(t, DataRedirect)
	data := storetest.Data(7, 3<<20+5)
	src := tpcpeer.NewSource(t, data)
	e.do("MKCOL", "/d", nil, nil).want(t, "MKCOL", 201, "")
	hdr := map[string]string{"Source": src.URL("/f/a"), "TransferHeaderAuthorization": "Bearer for-the-source"}
	status, loc, out := e.copyFollow("/d/pulled", hdr)
	if status != 307 || !strings.HasPrefix(loc, e.dsURL+"/obj/") || !strings.Contains(loc, "tpc_size=3145733") {
		t.Fatalf("COPY: %d %s", status, loc)
	}
	if !out.Success || len(out.Markers) < 2 || out.Markers[len(out.Markers)-1].Bytes != int64(len(data)) {
		t.Fatalf("stream %+v", out)
	}
	if r := e.get("/d/pulled", nil); r.status != 200 || r.body != string(data) {
		t.Fatalf("GET: %d, %d bytes", r.status, len(r.body))
	}
	if r := e.do("HEAD", "/d/pulled", map[string]string{"Want-Digest": "adler32,md5"}, nil); r.h.Get("Digest") != tpcpeer.DigestOf(data) {
		t.Errorf("Digest %q, want %q", r.h.Get("Digest"), tpcpeer.DigestOf(data))
	}
	for _, h := range src.Seen() {
		if h.Get("Authorization") != "Bearer for-the-source" {
			t.Errorf("the source saw Authorization %q", h.Get("Authorization"))
		}
	}
	// A source that refuses HEAD (a URL pre-signed for GET): md cannot
	// learn the size, reserves as for a chunked PUT, and the GET decides.
	status, loc, out = e.copyFollow("/d/presigned", map[string]string{"Source": src.URL("/getonly/a")})
	if status != 307 || !strings.Contains(loc, "tpc_size=-1") || !out.Success {
		t.Fatalf("a source refusing HEAD: %d %s %+v", status, loc, out)
	}
	if r := e.get("/d/presigned", nil); r.body != string(data) {
		t.Fatalf("GET: %d bytes", len(r.body))
	}

	seen := len(src.Seen())
	before := e.snapshot()
	e.do("COPY", "/d/pulled", map[string]string{"Source": src.URL("/f/a"), "Overwrite": "F"}, nil).want(t, "Overwrite: F on an existing file", 412, "Overwrite: F")
	e.do("COPY", "/nodir/x", map[string]string{"Source": src.URL("/f/a")}, nil).want(t, "missing parent", 409, "")
	e.do("COPY", "/d", map[string]string{"Source": src.URL("/f/a")}, nil).want(t, "onto a collection", 409, "")
	e.do("COPY", "/d/x", map[string]string{"Source": src.URL("/f/a"), "Credential": "gridsite"}, nil).want(t, "delegation", 400, "delegation")
	e.do("COPY", "/d/x", map[string]string{"Source": "ftp://example.org/f"}, nil).want(t, "ftp", 400, "")
	if n := len(src.Seen()); n != seen {
		t.Errorf("refused copies reached the source (%d requests)", n-seen)
	}
	if after := e.snapshot(); after != before {
		t.Errorf("refused copies changed the namespace:\n%s\n---\n%s", before, after)
	}

	// Failures after the 307 or at md: a failure line, nothing visible.
	for _, p := range []string{"/404/a", "/lie/a", "/cut/a", "/nodigest/a"} {
		_, _, out := e.copyFollow("/d/failed", map[string]string{"Source": src.URL(p)})
		if out.Success || out.Failure == "" {
			t.Errorf("%s: %+v", p, out)
		}
	}
	if after := e.snapshot(); after != before {
		t.Errorf("failed copies changed the namespace:\n%s\n---\n%s", before, after)
	}
}

// TestTPCPush: a COPY whose Destination names another server is a push
// of the request's file (a GET as far as md is concerned): md answers 307
// to a data server holding it, which PUTs it there and checks the
// destination's digest; a small file kept in the catalog is pushed by md
// itself. Overwrite: F onto an existing remote file is 412 before
// anything is sent.
func TestTPCPush(t *testing.T) {
	e := newEnv(t, DataRedirect)
	data := storetest.Data(8, 1<<20+3)
	e.put("/big", data).want(t, "PUT", 201, "")
	e.put("/small", []byte("kept in the catalog")).want(t, "PUT small", 201, "")
	d := tpcpeer.NewDest(t)
	status, loc, out := e.copyFollow("/big", map[string]string{"Destination": d.URL("/redir/big")})
	if status != 307 || !strings.HasPrefix(loc, e.dsURL+"/obj/") || !out.Success {
		t.Fatalf("push: %d %s %+v", status, loc, out)
	}
	if got, _ := d.File("/redir/big"); !bytes.Equal(got, data) {
		t.Fatalf("pushed %d bytes", len(got))
	}
	status, _, out = e.copyFollow("/small", map[string]string{"Destination": d.URL("/small")})
	if status != 202 || !out.Success {
		t.Fatalf("push of an inline file: %d %+v", status, out)
	}
	if got, _ := d.File("/small"); string(got) != "kept in the catalog" {
		t.Fatalf("pushed %q", got)
	}
	_, bodies, _, _ := d.Stats()
	e.do("COPY", "/big", map[string]string{"Destination": d.URL("/small"), "Overwrite": "F"}, nil).want(t, "Overwrite: F", 412, "")
	e.do("MKCOL", "/c", nil, nil).want(t, "MKCOL", 201, "")
	e.do("COPY", "/c", map[string]string{"Destination": d.URL("/dir")}, nil).want(t, "push of a collection", 409, "collections")
	e.do("COPY", "/missing", map[string]string{"Destination": d.URL("/m")}, nil).want(t, "push of nothing", 404, "")
	if _, b, _, _ := d.Stats(); b != bodies {
		t.Errorf("refused pushes sent %d bodies", b-bodies)
	}
	_, _, out = e.copyFollow("/big", map[string]string{"Destination": d.URL("/lie/big")})
	if out.Success || !strings.Contains(out.Failure, "mismatch") {
		t.Errorf("a destination with a wrong digest: %+v", out)
	}
	if _, ok := d.File("/lie/big"); ok {
		t.Error("a pushed file with a wrong digest was left there")
	}
}

// TestTPCForeignIsNeverLocal: the finding — a COPY whose Destination
// names another host overwrote the local path of the same name. It is a
// push now, whatever the path; a Destination on md's own host and port
// is the plain COPY; a MOVE to another server is 502.
func TestTPCForeignIsNeverLocal(t *testing.T) {
	e := newEnv(t, DataRedirect)
	e.do("MKCOL", "/dir", nil, nil).want(t, "MKCOL", 201, "")
	e.put("/dir/f", []byte("local f")).want(t, "PUT", 201, "")
	e.put("/src", storetest.Data(1, 100<<10)).want(t, "PUT", 201, "")
	before := e.snapshot()
	r := e.do("COPY", "/src", map[string]string{"Destination": "https://remote.example.org/dir/f"}, nil)
	if r.status != 307 || !strings.HasPrefix(r.h.Get("Location"), e.dsURL) {
		t.Fatalf("COPY to another host: %d %s", r.status, r.h.Get("Location"))
	}
	if after := e.snapshot(); after != before {
		t.Fatalf("a COPY naming another host changed the local namespace:\n%s\n---\n%s", before, after)
	}
	e.do("MOVE", "/src", map[string]string{"Destination": "https://remote.example.org/dir/f"}, nil).want(t, "MOVE to another host", 502, "another server")
	if after := e.snapshot(); after != before {
		t.Fatalf("a MOVE naming another host changed the local namespace")
	}
	u, _ := url.Parse(e.url)
	for _, dst := range []string{e.url + "/dir/g", "http://" + u.Host + "/dir/h", "/dir/i"} {
		e.do("COPY", "/src", map[string]string{"Destination": dst}, nil).want(t, "local COPY to "+dst, 201, "")
	}
	e.do("COPY", "/src", map[string]string{"Destination": "http://md.alias.example:80/dir/j", "Host": "md.alias.example"}, nil).want(t, "COPY to the Host it was sent to", 201, "")
}

// TestTPCGuard: with the guard on, md refuses to let a copy reach
// loopback: the HEAD it makes of the source is refused, the client gets
// 202 and a failure line naming the switch, the source sees nothing and
// nothing changes.
func TestTPCGuard(t *testing.T) {
	guarded, err := tpc.New(tpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, DataRedirect, func(o *Options) { o.TPC = guarded })
	src := tpcpeer.NewSource(t, []byte("internal"))
	e.put("/f", storetest.Data(2, 10<<10)).want(t, "PUT", 201, "")
	before := e.snapshot()
	for _, hdr := range []map[string]string{
		{"Source": src.URL("/f/x")},
		{"Source": strings.Replace(src.URL("/f/x"), "127.0.0.1", "localhost", 1)},
	} {
		status, _, out := e.copyFollow("/g", hdr)
		if status != 202 || out.Success || !strings.Contains(out.Failure, "tpc.allow_local") {
			t.Errorf("%v: %d %+v", hdr, status, out)
		}
	}
	d := tpcpeer.NewDest(t)
	status, _, out := e.copyFollow("/f", map[string]string{"Destination": d.URL("/x"), "Overwrite": "F"})
	if status != 202 || out.Success || !strings.Contains(out.Failure, "loopback") {
		t.Errorf("push to loopback: %d %+v", status, out)
	}
	if len(src.Seen()) != 0 {
		t.Errorf("the source was reached %d times", len(src.Seen()))
	}
	if after := e.snapshot(); after != before {
		t.Errorf("a refused copy changed the namespace")
	}
}

// TestTPCProxy: in proxy mode md moves the bytes itself, through the
// ordinary proxied upload: a good source is committed; a source whose
// digest lies or that breaks off leaves nothing visible, because md holds
// back the body's last byte until the digest matched. Pushes go from md.
func TestTPCProxy(t *testing.T) {
	e := newEnv(t, DataProxy)
	data := storetest.Data(9, 2<<20+11)
	src := tpcpeer.NewSource(t, data)
	status, _, out := e.copyFollow("/p", map[string]string{"Source": src.URL("/headdigest/a")})
	if status != 202 || !out.Success {
		t.Fatalf("proxied pull: %d %+v", status, out)
	}
	if r := e.get("/p", nil); r.body != string(data) {
		t.Fatalf("GET: %d bytes", len(r.body))
	}
	before := e.snapshot()
	for _, p := range []string{"/lie/a", "/cut/a"} {
		if _, _, out := e.copyFollow("/q", map[string]string{"Source": src.URL(p)}); out.Success {
			t.Errorf("%s: %+v", p, out)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.snapshot() != before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if after := e.snapshot(); after != before {
		t.Errorf("failed proxied pulls left:\n%s\n---\n%s", before, after)
	}
	d := tpcpeer.NewDest(t)
	if _, _, out := e.copyFollow("/p", map[string]string{"Destination": d.URL("/back")}); !out.Success {
		t.Fatalf("proxied push: %+v", out)
	}
	if got, _ := d.File("/back"); !bytes.Equal(got, data) {
		t.Fatalf("proxied push: %d bytes", len(got))
	}
}

// TestTPCClientGone: a client that hangs up on the data server's marker
// stream aborts the pull: no file, no object, the transfer counted as
// cancelled.
func TestTPCClientGone(t *testing.T) {
	e := newEnv(t, DataRedirect)
	data := storetest.Data(3, 8<<20)
	src := tpcpeer.NewSource(t, data)
	src.Rate = 2 << 20 // four seconds
	r := e.do("COPY", "/gone", map[string]string{"Source": src.URL("/slow/a")}, nil)
	if r.status != 307 {
		t.Fatalf("COPY: %d", r.status)
	}
	u, _ := url.Parse(r.h.Get("Location"))
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "COPY "+u.RequestURI()+" HTTP/1.1\r\nHost: "+u.Host+"\r\nSource: "+src.URL("/slow/a")+"\r\n\r\n")
	br := bufio.NewReader(conn)
	for markers := 0; markers < 3; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "End") {
			markers++
		}
	}
	conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for e.md.opts.TPC.Stats().Transfers[0][2] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("not counted as cancelled: %+v", e.md.opts.TPC.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := e.do("HEAD", "/gone", nil, nil).status; st != 404 {
		t.Errorf("HEAD after the client hung up: %d", st)
	}
	if s := e.snapshot(); strings.Contains(s, "obj ") {
		t.Errorf("objects left:\n%s", s)
	}
}

// TestTPCMaxPutBody: a pull of a source larger than md.max_put_body
// fails before a byte moves, in redirect and proxy mode.
func TestTPCMaxPutBody(t *testing.T) {
	src := tpcpeer.NewSource(t, storetest.Data(4, 2<<20))
	for _, mode := range []string{DataRedirect, DataProxy} {
		e := newEnv(t, mode, func(o *Options) { o.MaxPutBody = 1 << 20 })
		status, _, out := e.copyFollow("/big", map[string]string{"Source": src.URL("/f/a")})
		if status != 202 || out.Success || !strings.Contains(out.Failure, "more than the 1048576") {
			t.Errorf("%s: %d %+v", mode, status, out)
		}
		if st := e.do("HEAD", "/big", nil, nil).status; st != 404 {
			t.Errorf("%s: HEAD %d", mode, st)
		}
	}
	for _, m := range src.Methods() {
		if m != "HEAD" {
			t.Errorf("the source got a %s", m)
		}
	}
}

// TestTPCQuota: a pull reserves from the source's size on the governing
// quotas before a byte moves, as a PUT of that size: one that does not
// fit fails at md (507's reason in the failure line); one of unknown size
// (the source refuses HEAD) is bounded by what the quota has left and
// cut there by the data server; a good one is charged exactly; a failed
// one gives its reservation back at once. In redirect and proxy mode.
func TestTPCQuota(t *testing.T) {
	for _, mode := range []string{DataRedirect, DataProxy} {
		e := newEnv(t, mode)
		src := tpcpeer.NewSource(t, storetest.Data(6, 300_000))
		e.do("MKCOL", "/q", nil, nil).want(t, "MKCOL", 201, "")
		if _, err := e.db.SetQuota(context.Background(), "/q", 500_000, 0); err != nil {
			t.Fatal(err)
		}
		if _, _, out := e.copyFollow("/q/a", map[string]string{"Source": src.URL("/f/a")}); !out.Success {
			t.Fatalf("%s: a pull that fits: %+v", mode, out)
		}
		e.quotaExact(mode+" after a pull", "/q", 0)
		status, _, out := e.copyFollow("/q/b", map[string]string{"Source": src.URL("/f/b")})
		if status != 202 || out.Success || !strings.Contains(out.Failure, "quota") {
			t.Errorf("%s: a pull over the quota: %d %+v", mode, status, out)
		}
		if _, _, out := e.copyFollow("/q/c", map[string]string{"Source": src.URL("/getonly/c")}); out.Success {
			t.Errorf("%s: a pull of unknown size over the quota: %+v", mode, out)
		}
		for _, p := range []string{"/q/b", "/q/c"} {
			if st := e.do("HEAD", p, nil, nil).status; st != 404 {
				t.Errorf("%s: HEAD %s: %d", mode, p, st)
			}
		}
		e.quotaExact(mode+" after failed pulls", "/q", 0)
	}
}
