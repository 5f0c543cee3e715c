package diskserver

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"hash/adler32"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/internal/tpcpeer"
	"shoal/sign"
	"shoal/tpc"
	"shoal/wire"
)

func newTPCClient(t *testing.T) *tpc.Client {
	t.Helper()
	c, err := tpc.New(tpc.Options{AllowLocal: true, MarkerInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tpcURL is the URL md's 307 sends a third-party COPY of object id to:
// a pull's bounded by size, as md bounds it by what it reserved.
func tpcURL(ts *testServer, mode tpc.Mode, remote, id, upload string, size int64, sums string) string {
	return tpcURLMax(ts, mode, remote, id, upload, size, sums, map[tpc.Mode]int64{tpc.ModePull: size, tpc.ModePush: sign.NoLimit}[mode])
}

// tpcURLMax is tpcURL with the bound max (sign.NoLimit: none).
func tpcURLMax(ts *testServer, mode tpc.Mode, remote, id, upload string, size int64, sums string, max int64) string {
	u, _ := tpc.ParseRemote(remote, "Source")
	return ts.Keys.LimitURLAs(ts.URL, tpc.SignedMethod(mode, u, size, sums), id, upload, "", max, time.Now().Add(time.Minute)) + "&" + tpc.Query(size, sums)
}

// copyTo sends a COPY with header name: remote to u and reads the answer
// (its marker stream when 202).
func copyTo(t *testing.T, u, name, remote string, more ...string) (int, tpc.Outcome, string) {
	t.Helper()
	req, _ := http.NewRequest("COPY", u, nil)
	req.Header.Set(name, remote)
	for i := 0; i+1 < len(more); i += 2 {
		req.Header.Set(more[i], more[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 202 {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, tpc.Outcome{}, string(b)
	}
	out, err := tpc.ReadStream(resp.Body, nil)
	if err != nil {
		t.Fatal(err)
	}
	return 202, out, ""
}

// TestTPCPull: a data server pulls a source into an object, under md's
// upload, and commits it like a PUT (size, adler32, md5, the replica)
// once the source's digest matched; heartbeats list the upload while it
// lasts; a lying source leaves no object, no temp file and no commit.
func TestTPCPull(t *testing.T) {
	keys := sign.Random()
	md := startMD(t, keys)
	ts := startServer(t, Options{Keys: keys, MDURL: md.URL, HeartbeatInterval: 50 * time.Millisecond, TPC: newTPCClient(t)})
	data := bytes.Repeat([]byte("third-party copy "), 300_000)
	src := tpcpeer.NewSource(t, data)
	src.Rate = 20 << 20 // about a quarter of a second: heartbeats see it

	const id, upload = "0123456789abcdef0123456789abcdef", "up-1"
	status, out, body := copyTo(t, tpcURL(ts, tpc.ModePull, src.URL("/slow/x"), id, upload, int64(len(data)), ""), "Source", src.URL("/slow/x"),
		"TransferHeaderAuthorization", "Bearer S", "Authorization", "Bearer for-md")
	if status != 202 || !out.Success {
		t.Fatalf("%d %+v %s", status, out, body)
	}
	if len(out.Markers) < 3 || out.Markers[len(out.Markers)-1].Bytes != int64(len(data)) {
		t.Errorf("markers %+v", out.Markers)
	}
	commits, hbs, _, _, _ := md.snapshot()
	m := md5.Sum(data)
	if len(commits) != 1 || commits[0].Upload != upload || commits[0].Size != int64(len(data)) ||
		commits[0].Adler32 != wire.FormatAdler32(adler32.Checksum(data)) || commits[0].MD5 != hex.EncodeToString(m[:]) ||
		len(commits[0].Replicas) != 1 || commits[0].Replicas[0].Object != id {
		t.Fatalf("commits %+v", commits)
	}
	renewed := false
	for _, hb := range hbs {
		renewed = renewed || slices.Contains(hb.Uploads, upload)
	}
	if !renewed {
		t.Errorf("no heartbeat listed the upload while it was pulled")
	}
	if st, _, got := do(t, "GET", ts.signed("GET", id, ""), nil, nil); st != 200 || !bytes.Equal(got, data) {
		t.Fatalf("GET the pulled object: %d, %d bytes", st, len(got))
	}
	for _, h := range src.Seen() {
		if h.Get("Authorization") != "Bearer S" {
			t.Errorf("the source saw Authorization %q", h.Get("Authorization"))
		}
	}

	const id2 = "1123456789abcdef0123456789abcdef"
	_, out, _ = copyTo(t, tpcURL(ts, tpc.ModePull, src.URL("/lie/x"), id2, "up-2", int64(len(data)), ""), "Source", src.URL("/lie/x"))
	if out.Success || !strings.Contains(out.Failure, "adler32 mismatch") {
		t.Fatalf("lying source: %+v", out)
	}
	if commits, _, _, _, _ := md.snapshot(); len(commits) != 1 {
		t.Errorf("a lying source was committed: %+v", commits)
	}
	if st, _, _ := do(t, "GET", ts.signed("GET", id2, ""), nil, nil); st != 404 {
		t.Errorf("the lying source's object: %d", st)
	}
	if left := tmpFiles(t, ts.Dir); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}

	// A source larger than md reserved fails; md hears of it (an abort).
	const id4 = "6123456789abcdef0123456789abcdef"
	_, out, _ = copyTo(t, tpcURLMax(ts, tpc.ModePull, src.URL("/f/x"), id4, "up-4", int64(len(data)), "", 1000), "Source", src.URL("/f/x"))
	if out.Success || !strings.Contains(out.Failure, "more than the 1000 reserved") {
		t.Fatalf("a source larger than reserved: %+v", out)
	}
	if st, _, _ := do(t, "GET", ts.signed("GET", id4, ""), nil, nil); st != 404 {
		t.Errorf("the oversized source's object: %d", st)
	}

	// md refusing the commit (the target appeared, Overwrite: F) removes the object.
	md.setCommit(412, "exists")
	const id3 = "2123456789abcdef0123456789abcdef"
	_, out, _ = copyTo(t, tpcURL(ts, tpc.ModePull, src.URL("/f/x"), id3, "up-3", int64(len(data)), ""), "Source", src.URL("/f/x"))
	if out.Success || !strings.Contains(out.Failure, "committing") {
		t.Fatalf("refused commit: %+v", out)
	}
	if st, _, _ := do(t, "GET", ts.signed("GET", id3, ""), nil, nil); st != 404 {
		t.Errorf("an object whose commit md refused: %d", st)
	}
	if got := md.aborted(); strings.Join(got, " ") != "up-2 up-4 up-3" {
		t.Errorf("failed pulls told md %v, want up-2 up-4 up-3 (it gives their reservations back)", got)
	}
}

// TestTPCSignature: the URL md signs is good for its copy only: not
// with another Source, not for a push, not without its size; a COPY
// without TPC headers is 400, and a data server without TPC says 405.
func TestTPCSignature(t *testing.T) {
	keys := sign.Random()
	md := startMD(t, keys)
	ts := startServer(t, Options{Keys: keys, MDURL: md.URL, TPC: newTPCClient(t)})
	src := tpcpeer.NewSource(t, []byte("data"))
	const id = "3123456789abcdef0123456789abcdef"
	good := tpcURL(ts, tpc.ModePull, src.URL("/f/a"), id, "up", 4, "")
	if st, _, _ := copyTo(t, good, "Source", src.URL("/f/b")); st != 403 {
		t.Errorf("another source: %d", st)
	}
	if st, _, _ := copyTo(t, good, "Destination", src.URL("/f/a")); st != 403 {
		t.Errorf("a push with a pull's URL: %d", st)
	}
	if st, _, _ := copyTo(t, strings.Replace(good, "tpc_size=4", "tpc_size=5", 1), "Source", src.URL("/f/a")); st != 403 {
		t.Errorf("another size: %d", st)
	}
	if st, _, _ := copyTo(t, good, "X-Nothing", "1"); st != 400 {
		t.Errorf("no Source or Destination: %d", st)
	}
	if n := len(src.Seen()); n != 0 {
		t.Errorf("the source got %d requests from refused copies", n)
	}
	plain := startServer(t, Options{Keys: keys, MDURL: md.URL})
	if st, _, _ := copyTo(t, tpcURL(plain, tpc.ModePull, src.URL("/f/a"), id, "up", 4, ""), "Source", src.URL("/f/a")); st != 405 {
		t.Errorf("a data server without TPC: %d", st)
	}
}

// TestTPCPush: a data server pushes an object with the catalog's sums
// (signed into the URL) and checks the destination's digest; an object
// whose bytes fail those sums is not pushed as good.
func TestTPCPush(t *testing.T) {
	keys := sign.Random()
	ts := startServer(t, Options{Keys: keys, TPC: newTPCClient(t)})
	data := bytes.Repeat([]byte("pushed "), 200_000)
	const id = "4123456789abcdef0123456789abcdef"
	if st, _, _ := do(t, "PUT", ts.signed("PUT", id, ""), data, nil); st != 201 {
		t.Fatalf("PUT: %d", st)
	}
	m := md5.Sum(data)
	sums := tpc.FormatSums(shoalSums(adler32.Checksum(data), m[:]))
	d := tpcpeer.NewDest(t)
	_, out, body := copyTo(t, tpcURL(ts, tpc.ModePush, d.URL("/redir/p"), id, "", int64(len(data)), sums), "Destination", d.URL("/redir/p"))
	if !out.Success {
		t.Fatalf("push: %+v %s", out, body)
	}
	if got, _ := d.File("/redir/p"); !bytes.Equal(got, data) {
		t.Fatalf("pushed %d bytes of %d", len(got), len(data))
	}
	bad := tpc.FormatSums(shoalSums(adler32.Checksum(data)+1, m[:]))
	_, out, _ = copyTo(t, tpcURL(ts, tpc.ModePush, d.URL("/q"), id, "", int64(len(data)), bad), "Destination", d.URL("/q"))
	if out.Success || !strings.Contains(out.Failure, "does not match its checksum") {
		t.Fatalf("a bad copy here: %+v", out)
	}
	if _, ok := d.File("/q"); ok {
		t.Error("a bad copy was left on the destination")
	}
	if _, bodies, _, deletes := d.Stats(); bodies != 1 || len(deletes) != 0 {
		t.Errorf("a bad copy's PUT completed (%d bodies received, DELETEs %v): it must break before its last byte", bodies, deletes)
	}
	if st, _, _ := copyTo(t, tpcURL(ts, tpc.ModePush, d.URL("/r"), "5123456789abcdef0123456789abcdef", "", 1, sums), "Destination", d.URL("/r")); st != 404 {
		t.Errorf("push of a missing object: %d", st)
	}
}

func shoalSums(adler uint32, md5 []byte) shoal.Sums { return shoal.Sums{Adler32: adler, MD5: md5} }
