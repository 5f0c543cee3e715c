package objhttp

import (
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// FuzzRangeApplies: any If-Range is judged without panicking; only the
// exact strong ETag or the exact Last-Modified date lets a Range through,
// and with no validator known nothing does.
func FuzzRangeApplies(f *testing.F) {
	mod := time.Unix(1_700_000_000, 0).UTC()
	v := Validators{ETag: `"2a-1"`, Modified: mod}
	for _, s := range []string{`"2a-1"`, `W/"2a-1"`, `"2a-2"`, string(fasthttp.AppendHTTPDate(nil, mod)), "Tue, 14 Nov 2023 22:13:21 GMT", "", "garbage", `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ir string) {
		got := v.rangeApplies([]byte(ir))
		if ir == "" || ir == v.ETag {
			if !got {
				t.Errorf("If-Range %q refused", ir)
			}
		} else if got {
			if d, err := fasthttp.ParseHTTPDate([]byte(ir)); err != nil || !d.Equal(mod) {
				t.Errorf("If-Range %q let a Range through", ir)
			}
		}
		if ir != "" && (Validators{}).rangeApplies([]byte(ir)) {
			t.Errorf("If-Range %q matched no known validator", ir)
		}
	})
}
