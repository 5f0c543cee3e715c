package wire

import (
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
