package wire

import (
	"strings"
	"testing"
)

func TestAppendRequestID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc-123", "abc-123"},
		{"  padded\t", "padded"},
		{"a b\"c{d}", "a_b_c_d_"},
		{"a\r\nlevel=ERROR", "a__level=ERROR"},
		{strings.Repeat("x", 100), strings.Repeat("x", MaxRequestID)},
		{"", ""},
	} {
		if got := string(AppendRequestID(nil, []byte(tc.in))); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzRequestID(f *testing.F) {
	for _, s := range []string{"", "abc-123", " padded ", "a\r\nb", "\x00\xff", strings.Repeat("z", 70)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, h []byte) {
		id := AppendRequestID(nil, h)
		if len(id) > MaxRequestID {
			t.Fatalf("%d bytes", len(id))
		}
		for _, c := range id {
			if c <= ' ' || c >= 0x7f || c == '"' || c == '\\' || c == '&' || c == '?' {
				t.Fatalf("id %q holds %q", id, c)
			}
		}
	})
}
