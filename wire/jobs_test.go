package wire

import (
	"encoding/json"
	"testing"

	"shoal"
)

func TestCheckJob(t *testing.T) {
	good := map[string]string{"repair": "", "fsck": "{}", "drain": `{"server":"d1"}`, "scrub": `{"rate_mb_per_s":2.5}`}
	for kind, args := range good {
		if err := CheckJob(kind, json.RawMessage(args)); err != nil {
			t.Errorf("CheckJob(%s, %s): %v", kind, args, err)
		}
	}
	if err := CheckJob("scrub", nil); err != nil {
		t.Errorf("scrub without arguments: %v", err)
	}
	bad := [][2]string{{"", ""}, {"rm", "{}"}, {"drain", ""}, {"drain", `{"server":""}`}, {"drain", `[1]`},
		{"scrub", `{"rate_mb_per_s":-1}`}, {"scrub", `{"rate_mb_per_s":"x"}`}}
	for _, b := range bad {
		if err := CheckJob(b[0], json.RawMessage(b[1])); !shoal.IsKind(err, shoal.KindInvalid) {
			t.Errorf("CheckJob(%q, %q) = %v, want KindInvalid", b[0], b[1], err)
		}
	}
}

// FuzzCheckJob: whatever an admin request carries, CheckJob answers nil or
// KindInvalid, and a drain it accepts names a server.
func FuzzCheckJob(f *testing.F) {
	f.Add("drain", []byte(`{"server":"d1"}`))
	f.Add("scrub", []byte(`{"rate_mb_per_s":1e308}`))
	f.Add("repair", []byte(`null`))
	f.Fuzz(func(t *testing.T, kind string, args []byte) {
		err := CheckJob(kind, args)
		if err != nil {
			if !shoal.IsKind(err, shoal.KindInvalid) {
				t.Fatalf("CheckJob(%q, %q) = %v, not KindInvalid", kind, args, err)
			}
			return
		}
		if kind == JobDrain {
			var a DrainRequest
			if json.Unmarshal(args, &a) != nil || a.Server == "" {
				t.Fatalf("CheckJob accepted drain %q", args)
			}
		}
	})
}
