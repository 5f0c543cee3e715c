package md

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestReservationsForFree: header-only PUTs (Expect: 100-continue, no
// body ever sent) are bounded per client (429 beyond) and their
// reservations expire soon (URLTTL + ServerTTL), while an upload that
// lasts longer than that completes: the data server receiving it renews
// it with every heartbeat. The finding: each such PUT left a
// pending-upload row for about an hour.
func TestReservationsForFree(t *testing.T) {
	e := newEnv(t, DataRedirect, func(o *Options) {
		o.URLTTL, o.ServerTTL, o.UploadTTL, o.MaxPendingUploads = time.Second, 3*time.Second, 3*time.Second, 3
	})
	hdr := map[string]string{"Expect": "100-continue"}
	for i := range 3 {
		e.do("PUT", "/f"+string(rune('a'+i)), hdr, make([]byte, 10000)).want(t, "header-only PUT", 307, "")
	}
	r := e.do("PUT", "/fz", hdr, make([]byte, 10000))
	r.want(t, "fourth pending PUT of one client", 429, "pending")
	if r.h.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
	// md's expiry loop (every URLTTL) collects them 4 s after they were
	// made; then the client may reserve again.
	time.Sleep(6 * time.Second)
	if n, err := e.db.ExpireUploads(context.Background(), time.Now()); n != 0 || err != nil {
		t.Errorf("%d reservations without a body were still there 6 s later (%v)", n, err)
	}
	for i := range 2 {
		e.do("PUT", "/g"+string(rune('a'+i)), hdr, make([]byte, 10000)).want(t, "header-only PUT after the expiry", 307, "")
	}

	// A slow upload through the redirect: 7 s, longer than the first
	// expiry (4 s) and than UploadTTL (3 s). Its first 8 KiB come at once
	// (the data server reads them before it checks the URL's signature,
	// valid for 1 s here).
	loc := e.do("PUT", "/slow", hdr, make([]byte, 16<<10)).h.Get("Location")
	pr, pw := io.Pipe()
	go func() {
		pw.Write(make([]byte, 8<<10))
		for range 8 {
			time.Sleep(900 * time.Millisecond)
			pw.Write(make([]byte, 1<<10))
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("PUT", loc, pr)
	req.ContentLength = 16 << 10
	resp, err := e.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Errorf("a 7 s upload: %d, want 201 (its reservation renewed by heartbeats)", resp.StatusCode)
	}
	e.do("HEAD", "/slow", nil, nil).want(t, "the slow upload", 200, "")
}
