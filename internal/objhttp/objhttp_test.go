package objhttp

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
)

// request is a RequestCtx for method on uri with the given headers, as
// fasthttp hands it to a handler.
func request(method, uri string, hdr ...string) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(uri)
	for i := 0; i+1 < len(hdr); i += 2 {
		ctx.Request.Header.Set(hdr[i], hdr[i+1])
	}
	return &ctx
}

func TestCheck(t *testing.T) {
	ctx := request("GET", "/obj/../x")
	if _, ok := Check(ctx, "t", "../x"); ok || ctx.Response.StatusCode() != 400 {
		t.Errorf("bad id: ok %v, status %d; want 400", ok, ctx.Response.StatusCode())
	}
	ctx = request("POST", "/obj/ab")
	if _, ok := Check(ctx, "t", "ab"); ok || ctx.Response.StatusCode() != 405 || string(ctx.Response.Header.Peek("Allow")) != Allow {
		t.Errorf("POST: ok %v, status %d, Allow %q; want 405 with %q", ok, ctx.Response.StatusCode(), ctx.Response.Header.Peek("Allow"), Allow)
	}
	ctx = request("HEAD", "/obj/ab")
	if m, ok := Check(ctx, "t", "ab"); !ok || m != "HEAD" {
		t.Errorf("HEAD: %q %v", m, ok)
	}
}

func TestStartRead(t *testing.T) {
	for _, c := range []struct {
		rng    string
		status int
		cr     string
		n      int
	}{
		{"", 200, "", 0},
		{"items=1-2", 200, "", 0},
		{"bytes=10-19", 206, "bytes 10-19/100", 1},
		{"bytes=0-0,-1", 206, "", 2},
		{"bytes=5-2", 400, "", 0},
		{"bytes=100-", 416, "bytes */100", 0},
	} {
		ctx := request("GET", "/obj/ab", "Range", c.rng)
		rs, ok := StartRead(ctx, 100)
		st := ctx.Response.StatusCode()
		cr := string(ctx.Response.Header.Peek("Content-Range"))
		if st != c.status || cr != c.cr || len(rs) != c.n || ok != (st < 400) {
			t.Errorf("Range %q: %d %q %d ranges ok %v; want %d %q %d", c.rng, st, cr, len(rs), ok, c.status, c.cr, c.n)
		}
	}
}

func TestFailKeepsConnectionClose(t *testing.T) {
	ctx := request("PUT", "/obj/ab")
	ctx.SetConnectionClose()
	httperr.Write(ctx, shoal.Errorf("t", shoal.KindTooLarge, "big"))
	if !ctx.Response.ConnectionClose() || ctx.Response.StatusCode() != 413 {
		t.Errorf("status %d, connection close %v", ctx.Response.StatusCode(), ctx.Response.ConnectionClose())
	}
}

func TestBody(t *testing.T) {
	read := func(data string, want, max int64) error {
		_, err := io.ReadAll(&Body{R: strings.NewReader(data), Want: want, Max: max, Op: "t"})
		return err
	}
	if err := read("abc", 3, 10); err != nil {
		t.Errorf("exact: %v", err)
	}
	if err := read("abc", -1, 10); err != nil {
		t.Errorf("chunked: %v", err)
	}
	if err := read("ab", 3, 10); !shoal.IsKind(err, shoal.KindInvalid) {
		t.Errorf("short: %v", err)
	}
	if err := read("abcdef", -1, 4); !shoal.IsKind(err, shoal.KindTooLarge) {
		t.Errorf("over max: %v", err)
	}
	b := &Body{R: io.MultiReader(strings.NewReader("a"), errReader{}), Want: 5, Max: 10, Op: "t"}
	if _, err := io.ReadAll(b); !shoal.IsKind(err, shoal.KindInvalid) || !b.Failed {
		t.Errorf("broken body: %v, failed %v", err, b.Failed)
	}
	if n, err := io.ReadAll(&Body{Max: 1}); len(n) != 0 || err != nil {
		t.Errorf("nil reader: %q %v", n, err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestLoops(t *testing.T) {
	var l Loops
	var n atomic.Int32
	started := make(chan struct{})
	l.Start(context.Background(), func(ctx context.Context) {
		l.Go(func() {
			Every(ctx, time.Millisecond, true, func() {
				if n.Add(1) == 3 {
					close(started)
				}
			})
		})
	})
	l.Start(context.Background(), func(context.Context) { t.Error("second Start ran") })
	<-started
	l.Stop()
	after := n.Load()
	time.Sleep(5 * time.Millisecond)
	if n.Load() != after {
		t.Error("loop ran after Stop")
	}
	var m Loops
	m.Stop()
	m.Start(context.Background(), func(context.Context) { t.Error("Start after Stop ran") })
}

func TestRedactQuoted(t *testing.T) {
	in := `error when serving connection "127.0.0.1:37419"<->"[::1]:59756": error when reading request headers: malformed mime header: missing colon: "Authorization Bearer SECRET \"x\"": buffer size=102`
	want := `error when serving connection "127.0.0.1:37419"<->"[::1]:59756": error when reading request headers: malformed mime header: missing colon: "[redacted]": buffer size=102`
	if got := RedactQuoted(in); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
