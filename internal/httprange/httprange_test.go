package httprange

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"reflect"
	"slices"
	"strings"
	"testing"

	"shoal"
)

func TestParse(t *testing.T) {
	const size = 100
	for _, c := range []struct {
		h    string
		want []Range
		kind shoal.Kind // KindOther: no error
	}{
		// Ignored: the whole body.
		{"", nil, shoal.KindOther},
		{"   ", nil, shoal.KindOther},
		{"items=0-1", nil, shoal.KindOther},
		{"bytesx=0-1", nil, shoal.KindOther},
		{"bytes=" + strings.Repeat("0-0,", MaxRanges), nil, shoal.KindOther},
		// Satisfiable.
		{"bytes=0-0", []Range{{0, 1}}, shoal.KindOther},
		{"bytes=10-19", []Range{{10, 20}}, shoal.KindOther},
		{"BYTES=10-19", []Range{{10, 20}}, shoal.KindOther},
		{"bytes=90-", []Range{{90, 100}}, shoal.KindOther},
		{"bytes=-5", []Range{{95, 100}}, shoal.KindOther},
		{"bytes=-500", []Range{{0, 100}}, shoal.KindOther},
		{"bytes=90-2000", []Range{{90, 100}}, shoal.KindOther},
		{"bytes=99-99999999999999999999999", []Range{{99, 100}}, shoal.KindOther},
		{"bytes=-99999999999999999999999", []Range{{0, 100}}, shoal.KindOther},
		{"bytes= 5-6 ,", []Range{{5, 7}}, shoal.KindOther},
		{"bytes=0-9, 50-59, -3", []Range{{0, 10}, {50, 60}, {97, 100}}, shoal.KindOther},
		{"bytes=200-300, 1-1", []Range{{1, 2}}, shoal.KindOther},
		// Unsatisfiable.
		{"bytes=100-", nil, shoal.KindBadRange},
		{"bytes=200-300", nil, shoal.KindBadRange},
		{"bytes=-0", nil, shoal.KindBadRange},
		{"bytes=100-101,200-", nil, shoal.KindBadRange},
		{"bytes=99999999999999999999999-", nil, shoal.KindBadRange},
		// Malformed bytes ranges.
		{"bytes", nil, shoal.KindInvalid},
		{"bytes=", nil, shoal.KindInvalid},
		{"bytes=,", nil, shoal.KindInvalid},
		{"bytes=abc", nil, shoal.KindInvalid},
		{"bytes=5-2", nil, shoal.KindInvalid},
		{"bytes=x-2", nil, shoal.KindInvalid},
		{"bytes=1-2-3", nil, shoal.KindInvalid},
		{"bytes=--1", nil, shoal.KindInvalid},
		{"bytes=-", nil, shoal.KindInvalid},
		{"bytes=+1-2", nil, shoal.KindInvalid},
		{"bytes=1-+2", nil, shoal.KindInvalid},
		{"bytes=0-1,zz", nil, shoal.KindInvalid},
	} {
		got, err := Parse(c.h, size)
		if k := shoal.KindOf(err); err != nil && k != c.kind || err == nil && c.kind != shoal.KindOther {
			t.Errorf("Parse(%.30q) error %v, want kind %v", c.h, err, c.kind)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%.30q) = %v, want %v", c.h, got, c.want)
		}
	}
}

func TestParseMaxRanges(t *testing.T) {
	var specs []string
	for i := range MaxRanges {
		specs = append(specs, fmt.Sprintf("%d-%d", 1000*i, 1000*i+9))
	}
	h := "bytes=" + strings.Join(specs, ",")
	if rs, err := Parse(h, 1<<20); err != nil || len(rs) != MaxRanges {
		t.Errorf("%d ranges: got %d, %v; want all", MaxRanges, len(rs), err)
	}
	if rs, err := Parse(h+",0-0", 1<<20); err != nil || rs != nil {
		t.Errorf("%d ranges: got %d, %v; want ignored", MaxRanges+1, len(rs), err)
	}
}

func TestParseEmptyBody(t *testing.T) {
	for _, h := range []string{"bytes=0-", "bytes=-1", "bytes=0-0"} {
		if _, err := Parse(h, 0); !shoal.IsKind(err, shoal.KindBadRange) {
			t.Errorf("Parse(%q, 0) = %v, want KindBadRange", h, err)
		}
	}
}

func TestReasonIsShort(t *testing.T) {
	_, err := Parse("bytes="+strings.Repeat("x", 5000), 10)
	if r := shoal.Reason(err); len(r) > 120 || !strings.Contains(r, "Range") {
		t.Errorf("reason %q", r)
	}
}

func TestContentRange(t *testing.T) {
	if got, want := ContentRange(Range{10, 20}, 100), "bytes 10-19/100"; got != want {
		t.Errorf("ContentRange = %q, want %q", got, want)
	}
	if got, want := string(AppendContentRange([]byte("x"), Range{0, 1}, 1)), "xbytes 0-0/1"; got != want {
		t.Errorf("AppendContentRange = %q, want %q", got, want)
	}
	if got, want := Unsatisfied(100), "bytes */100"; got != want {
		t.Errorf("Unsatisfied = %q, want %q", got, want)
	}
	if got, want := string(AppendUnsatisfied(nil, 0)), "bytes */0"; got != want {
		t.Errorf("AppendUnsatisfied = %q, want %q", got, want)
	}
}

func TestMultipart(t *testing.T) {
	data := []byte(strings.Repeat("0123456789", 10))
	rs := []Range{{0, 10}, {50, 60}, {97, 100}, {5, 6}}
	body, n, ct := Multipart(bytes.NewReader(data), rs, int64(len(data)), "text/plain")
	b, err := io.ReadAll(body)
	if err != nil || int64(len(b)) != n {
		t.Fatalf("read %d bytes (%v), length said %d", len(b), err, n)
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/byteranges" {
		t.Fatalf("Content-Type %q", ct)
	}
	mr := multipart.NewReader(bytes.NewReader(b), params["boundary"])
	for _, r := range rs {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %v: %v", r, err)
		}
		got, _ := io.ReadAll(p)
		if cr := p.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes %d-%d/100", r.Start, r.End-1) || !bytes.Equal(got, data[r.Start:r.End]) {
			t.Errorf("part %v: Content-Range %q, body %q", r, cr, got)
		}
		if p.Header.Get("Content-Type") != "text/plain" {
			t.Errorf("part Content-Type %q", p.Header.Get("Content-Type"))
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("after the last part: %v, want EOF", err)
	}
}

// FuzzParse: any header gives ranges inside the body, or an error of one
// of the two kinds, and never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"bytes=0-0", "bytes=-5", "bytes=5-", "bytes=1-2,3-4", "bytes=5-2", "items=1-2", "bytes=,,", "bytes=99999999999999999999-"} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			size = -(size + 1)
		}
		rs, err := Parse(h, size)
		if err != nil {
			if k := shoal.KindOf(err); k != shoal.KindInvalid && k != shoal.KindBadRange {
				t.Fatalf("Parse(%q, %d): kind %v", h, size, k)
			}
			if rs != nil {
				t.Fatalf("Parse(%q, %d): ranges with an error", h, size)
			}
			return
		}
		if len(rs) > MaxRanges {
			t.Fatalf("Parse(%q, %d): %d ranges", h, size, len(rs))
		}
		var sent int64
		for _, r := range rs {
			if r.Start < 0 || r.Start >= r.End || r.End > size {
				t.Fatalf("Parse(%q, %d): range %v outside the body", h, size, r)
			}
			sent += r.Length()
		}
		if len(rs) > 1 && sent > size {
			t.Fatalf("Parse(%q, %d): %d bytes of ranges, more than the body", h, size, sent)
		}
	})
}

// TestRangeAmplification: overlapping ranges are merged and a Range header
// never makes a multipart answer much larger than the body
// (RangeAmplification finding: 64 overlapping ranges returned 64× an object).
func TestRangeAmplification(t *testing.T) {
	const size = 1 << 20
	overlapping := "bytes=" + strings.TrimSuffix(strings.Repeat("0-,", 63), ",")
	cases := []struct {
		h    string
		want []Range
	}{
		{overlapping, []Range{{0, size}}},
		{"bytes=0-99,50-149,10-19", []Range{{0, 150}}},
		{"bytes=100-199,200-299", []Range{{100, 300}}},           // touching: one part
		{"bytes=500-599,0-9", []Range{{500, 600}, {0, 10}}},      // disjoint: the client's order
		{"bytes=500-599,0-9,5-14", []Range{{0, 15}, {500, 600}}}, // merged: ascending
		{"bytes=-10,0-0", []Range{{size - 10, size}, {0, 1}}},    // suffix kept
		{"bytes=0-0,2-2,4-4", []Range{{0, 1}, {2, 3}, {4, 5}}},   // small parts of a large body: fine
	}
	for _, c := range cases {
		rs, err := Parse(c.h, size)
		if err != nil || !slices.Equal(rs, c.want) {
			t.Errorf("Parse(%.40q) = %v, %v; want %v", c.h, rs, err, c.want)
		}
	}
	// Many tiny parts of a small body cost more in part headers than the
	// body itself: the whole body is served instead.
	tiny := "bytes=0-0,2-2,4-4,6-6,8-8,10-10,12-12,14-14,16-16,18-18,20-20,22-22,24-24"
	if rs, err := Parse(tiny, 100); rs != nil || err != nil {
		t.Errorf("13 one-byte parts of 100 bytes: %v, %v; want the whole body", rs, err)
	}
	for _, h := range []string{overlapping, tiny, "bytes=0-0,2-2"} {
		for _, n := range []int64{1, 10, 100, 4096, size} {
			rs, err := Parse(h, n)
			if err != nil {
				continue
			}
			if rs == nil {
				continue // whole body
			}
			_, length, _ := Multipart(strings.NewReader(strings.Repeat("x", int(n))), rs, n, "application/octet-stream")
			if len(rs) > 1 && length > 2*n+amplificationSlack {
				t.Errorf("Range %.30q on %d bytes: multipart of %d bytes", h, n, length)
			}
		}
	}
}
