package shoal

import (
	"net/url"
	"strings"
	"testing"
)

func TestCheckPoolName(t *testing.T) {
	for _, ok := range []string{"default", "ec", "r2", "fast-ssd", "site_a.disks", "0", strings.Repeat("p", MaxPoolNameLen)} {
		if err := CheckPoolName(ok); err != nil {
			t.Errorf("CheckPoolName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "gw", "bad name", "a/b", ".", "..", "-x", ".hidden", "a\x00b", "é", "a:b", "a%2fb", "tab\t", strings.Repeat("p", MaxPoolNameLen+1)} {
		if err := CheckPoolName(bad); !IsKind(err, KindInvalid) {
			t.Errorf("CheckPoolName(%q) = %v, want KindInvalid", bad, err)
		}
	}
}

// FuzzCheckPoolName: a name CheckPoolName lets through needs no escaping
// anywhere it goes, and is not reserved.
func FuzzCheckPoolName(f *testing.F) {
	for _, s := range []string{"default", "gw", "a/b", "bad name", "..", "x\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if CheckPoolName(name) != nil {
			return
		}
		if name == "" || len(name) > MaxPoolNameLen || name == GatewayPool || name == "." || name == ".." {
			t.Fatalf("%q accepted", name)
		}
		if url.PathEscape(name) != name || url.QueryEscape(name) != name || strings.ContainsAny(name, "/\\\"' \t\r\n:#{}[],&*!|>%@`") {
			t.Fatalf("%q accepted but needs escaping", name)
		}
	})
}
