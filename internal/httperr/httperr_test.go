package httperr

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

// TestWrite: every kind is answered with its status, its name in
// X-Shoal-Kind, its reason as text/plain (as a DAV:error XML body for a
// 507, RFC 4331), and Retry-After exactly on 503 (contract 4); a decided
// Connection: close survives.
func TestWrite(t *testing.T) {
	for k := shoal.KindOther; ; k++ {
		if _, ok := shoal.ParseKind(k.String()); !ok {
			break
		}
		var ctx fasthttp.RequestCtx
		ctx.Response.Header.Set("ETag", `"stale"`)
		Write(&ctx, shoal.Errorf("op", k, "why"))
		r := &ctx.Response
		if k.Status() == 507 {
			if r.StatusCode() != 507 || string(r.Header.Peek(wire.HeaderKind)) != k.String() ||
				string(r.Header.ContentType()) != "application/xml; charset=utf-8" ||
				!strings.Contains(string(r.Body()), "<s:reason>"+k.String()+": why</s:reason>") {
				t.Errorf("%v: %d, kind %q, body %q, type %q", k, r.StatusCode(), r.Header.Peek(wire.HeaderKind), r.Body(), r.Header.ContentType())
			}
			continue
		}
		if r.StatusCode() != k.Status() || string(r.Header.Peek(wire.HeaderKind)) != k.String() ||
			string(r.Body()) != k.String()+": why\n" || string(r.Header.ContentType()) != "text/plain; charset=utf-8" {
			t.Errorf("%v: %d, kind %q, body %q, type %q", k, r.StatusCode(), r.Header.Peek(wire.HeaderKind), r.Body(), r.Header.ContentType())
		}
		if ra := string(r.Header.Peek("Retry-After")); (k.Status() == 503 || k.Status() == 429) != (ra == RetryAfter) {
			t.Errorf("%v: Retry-After %q", k, ra)
		}
		if len(r.Header.Peek("ETag")) > 0 {
			t.Errorf("%v: the ETag set before stayed", k)
		}
	}
	var ctx fasthttp.RequestCtx
	ctx.SetConnectionClose()
	Write(&ctx, shoal.Errorf("op", shoal.KindTooLarge, "body too large"))
	if !ctx.Response.ConnectionClose() || ctx.Response.StatusCode() != 413 {
		t.Errorf("Connection: close dropped (%d)", ctx.Response.StatusCode())
	}
	ctx.Response.Reset()
	Write(&ctx, shoal.Errorf("lock", shoal.KindLocked, "resource is locked"))
	if ctx.Response.StatusCode() != 423 {
		t.Errorf("KindLocked: %d, want 423", ctx.Response.StatusCode())
	}
}
