package md

import (
	"io"
	"net/http"
	"testing"
	"time"

	"shoal/internal/netguard"
)

// TestTransferIdleNotWallClock: a PUT streamed through md lasts as long
// as it makes progress — here three times md's idle limit — and one that
// stalls past the limit is cut and leaves nothing visible. The finding: a
// PUT streamed through md was cut with 503 at 5 minutes whatever its
// progress. A stalled client gets 408.
func TestTransferIdleNotWallClock(t *testing.T) {
	e := newEnv(t, DataProxy, func(o *Options) {
		o.Net = netguard.Config{ReadHeader: time.Second, Idle: 5 * time.Second,
			Limits: netguard.Limits{ReadIdle: time.Second, WriteIdle: time.Second}}
	})
	put := func(path string, pause time.Duration, chunks int) (int, error) {
		pr, pw := io.Pipe()
		go func() {
			pw.Write(make([]byte, 8<<10)) // what fasthttp reads before md's handler
			for range chunks {
				time.Sleep(pause)
				if _, err := pw.Write(make([]byte, 4<<10)); err != nil {
					return
				}
			}
			pw.Close()
		}()
		req, _ := http.NewRequest("PUT", e.url+path, pr)
		req.ContentLength = int64(8<<10 + chunks*4<<10)
		resp, err := e.http.Do(req)
		if err != nil {
			return 0, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("%s: %d %s", path, resp.StatusCode, b)
		return resp.StatusCode, nil
	}
	if status, err := put("/steady", 250*time.Millisecond, 12); err != nil || status != 201 {
		t.Errorf("a 3 s upload that never pauses for the 1 s idle limit: %d, %v; want 201", status, err)
	}
	if got := e.get("/steady", nil); len(got.body) != 8<<10+12*4<<10 {
		t.Errorf("the steady upload reads back %d bytes", len(got.body))
	}
	// The client's stall is a 408, not a 503 with Retry-After as if the
	// data server were down (the status, when the client reads it).
	if status, err := put("/stalled", 2500*time.Millisecond, 1); err == nil && status != 408 {
		t.Errorf("an upload silent for 2.5 s (idle limit 1 s): %d, want 408", status)
	}
	e.do("HEAD", "/stalled", nil, nil).want(t, "the stalled upload", 404, "")
}
