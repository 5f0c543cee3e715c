package accesslog

import (
	"strings"
	"testing"
)

// TestRequestIDs: a client's id is kept sanitized and bounded; without a
// usable one each request gets a new id (the end-to-end logs are md's
// TestRequestID and TestAuthLogsNoSecrets).
func TestRequestIDs(t *testing.T) {
	if got := string(AppendRequestID(nil, []byte(" a b\n"))); got != "a_b_" {
		t.Errorf("sanitized id %q", got)
	}
	if got := AppendRequestID(nil, []byte(strings.Repeat("x", 200))); len(got) > 64 {
		t.Errorf("id of %d bytes kept", len(got))
	}
	a, b := string(AppendRequestID(nil, nil)), string(AppendRequestID(nil, []byte("  ")))
	if a == "" || b == "" || a == b {
		t.Errorf("made ids %q and %q: want two distinct", a, b)
	}
	if m := methodName([]byte("PROPFIND")); m != "PROPFIND" {
		t.Errorf("method %q", m)
	}
	if m := methodName([]byte(strings.Repeat("Z", 40) + "\r\n")); len(m) != 16 {
		t.Errorf("unknown method logged as %q", m)
	}
}
