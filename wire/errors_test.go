package wire

import (
	"strings"
	"testing"

	"shoal"
)

func TestErrorKind(t *testing.T) {
	for k := shoal.KindInvalid; ; k++ {
		if _, ok := shoal.ParseKind(k.String()); !ok {
			break
		}
		header := func(h string) string {
			if h == HeaderKind {
				return k.String()
			}
			return ""
		}
		// The kind travels, however many kinds share its status.
		if got := ErrorKind(k.Status(), header); got != k {
			t.Errorf("%v sent: read %v", k, got)
		}
	}
	none := func(string) string { return "" }
	for status, want := range map[int]shoal.Kind{404: shoal.KindNotFound, 502: shoal.KindUnavailable, 418: shoal.KindInvalid} {
		if got := ErrorKind(status, none); got != want {
			t.Errorf("%d without %s: %v, want %v", status, HeaderKind, got, want)
		}
	}
	odd := func(string) string { return "no such kind" }
	if got := ErrorKind(404, odd); got != shoal.KindNotFound {
		t.Errorf("an unknown kind name: %v, want the status's guess", got)
	}
}

// TestResponseError: the rebuilt error has the sent kind, and its reason
// is the body the server sent (relayed, it reads the same).
func TestResponseError(t *testing.T) {
	header := func(h string) string {
		if h == HeaderKind {
			return shoal.KindExist.String()
		}
		return ""
	}
	err := ResponseError("op", "/p", 405, header, []byte("already exists: /p\n"))
	if !shoal.IsKind(err, shoal.KindExist) || shoal.Reason(err) != "already exists: /p" {
		t.Errorf("%v: kind %v, reason %q", err, shoal.KindOf(err), shoal.Reason(err))
	}
	err = ResponseError("op", "", 503, func(string) string { return "" }, []byte("unavailable\n"))
	if !shoal.IsKind(err, shoal.KindUnavailable) || shoal.Reason(err) != "unavailable" {
		t.Errorf("%v: reason %q", err, shoal.Reason(err))
	}
	err = ResponseError("op", "", 500, func(string) string { return "" }, nil)
	if shoal.Reason(err) != "internal error: 500" {
		t.Errorf("empty body: reason %q", shoal.Reason(err))
	}
}

// TestInsufficientStorageBody: a 507's body names the RFC 4331
// precondition, and its reason is read back (escaped characters
// included) as from a text body.
func TestInsufficientStorageBody(t *testing.T) {
	for _, c := range []struct {
		kind shoal.Kind
		cond string
	}{{shoal.KindQuota, "<D:quota-not-exceeded/>"}, {shoal.KindInsufficient, "<D:sufficient-disk-space/>"}} {
		reason := c.kind.String() + ": the quota on /a<b>&c has no room"
		body := InsufficientStorageBody(c.kind, reason)
		if !strings.Contains(string(body), c.cond) || !strings.Contains(string(body), `xmlns:D="DAV:"`) {
			t.Errorf("%v: body %s", c.kind, body)
		}
		header := func(h string) string {
			if h == HeaderKind {
				return c.kind.String()
			}
			return ""
		}
		err := ResponseError("op", "", 507, header, body)
		if !shoal.IsKind(err, c.kind) || shoal.Reason(err) != reason {
			t.Errorf("%v: read back as %v, reason %q", c.kind, shoal.KindOf(err), shoal.Reason(err))
		}
	}
	if _, ok := XMLErrorReason([]byte("<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\"/>")); ok {
		t.Error("a multistatus read as an error body")
	}
}

// FuzzXMLErrorReason: any body (a peer's answer) is read or refused,
// never a panic.
func FuzzXMLErrorReason(f *testing.F) {
	f.Add(InsufficientStorageBody(shoal.KindQuota, "quota exceeded: x"))
	f.Add([]byte("<?xml version=\"1.0\"?><D:error xmlns:D=\"DAV:\"><D:sufficient-disk-space/></D:error>"))
	f.Add([]byte("not found: /x\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if r, ok := XMLErrorReason(body); ok && strings.Contains(r, "<s:reason>") {
			t.Fatalf("reason %q keeps the markup", r)
		}
	})
}
