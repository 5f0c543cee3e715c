package cache

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"shoal"
)

func sampleEntries() []*shoal.Entry {
	mt := time.Date(2025, 3, 4, 5, 6, 7, 891011121, time.UTC)
	return []*shoal.Entry{
		{ID: 1, Path: "/", IsDir: true, MTime: mt, CTime: mt},
		{ID: 7, Parent: 1, Path: "/dir with space/é", IsDir: true, MTime: mt},
		{
			ID: 1 << 40, Parent: 9, Path: "/a/b/file", Size: 1 << 33, MTime: mt, CTime: mt.Add(-time.Hour),
			Version: 12, Sums: shoal.Sums{Adler32: 0xdeadbeef, MD5: bytes.Repeat([]byte{0xab}, 16), SHA256: bytes.Repeat([]byte{1}, 32)},
			Layout:   shoal.Layout{Kind: shoal.LayoutEC, K: 4, M: 2},
			Replicas: []shoal.Replica{{Server: "ds1", Object: "00ff", Shard: 0, Size: 10, Sum: 1}, {Server: "ds2", Object: "0a", Shard: 5, Size: 11, Sum: 0xffffffff}},
		},
		{ID: 3, Parent: 1, Path: "/small", Size: 3, Inline: []byte("abc"), Layout: shoal.DefaultLayout, Sums: shoal.Sums{Adler32: 5}},
		{ID: 4, Parent: 1, Path: "/empty", Inline: []byte{}, Layout: shoal.DefaultLayout},
		{ID: 5, Parent: 1, Path: "/zero-times"},
	}
}

// sameEntry compares entries field by field, times by instant.
func sameEntry(t *testing.T, got, want *shoal.Entry) {
	t.Helper()
	if !got.MTime.Equal(want.MTime) || !got.CTime.Equal(want.CTime) {
		t.Errorf("%s: times got %v %v, want %v %v", want.Path, got.MTime, got.CTime, want.MTime, want.CTime)
	}
	if (got.Inline == nil) != (want.Inline == nil) {
		t.Errorf("%s: Inline nil-ness got %v, want %v", want.Path, got.Inline == nil, want.Inline == nil)
	}
	g, w := *got, *want
	g.MTime, g.CTime, w.MTime, w.CTime = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if len(g.Inline) == 0 && len(w.Inline) == 0 {
		g.Inline, w.Inline = nil, nil
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("entry round trip:\n got %+v\nwant %+v", g, w)
	}
}

func TestCodecRoundTrip(t *testing.T) {
	gens := []uint64{0, 1, 1<<64 - 1}
	for _, e := range sampleEntries() {
		v := appendValue(nil, gens, e, 0)
		c, err := decodeValue(v)
		if err != nil {
			t.Fatalf("%s: decode: %v", e.Path, err)
		}
		if !reflect.DeepEqual(c.gens, gens) {
			t.Errorf("gens got %v, want %v", c.gens, gens)
		}
		sameEntry(t, c.entry, e)
		// Every strict prefix is malformed, never a shorter valid value.
		for i := range v {
			if _, err := decodeValue(v[:i]); err == nil {
				t.Fatalf("%s: prefix of %d/%d bytes decoded", e.Path, i, len(v))
			}
		}
	}
}

func TestCodecNegative(t *testing.T) {
	for _, k := range []shoal.Kind{shoal.KindNotFound, shoal.KindNotDir} {
		v := appendValue(nil, []uint64{42}, nil, k)
		c, err := decodeValue(v)
		if err != nil {
			t.Fatal(err)
		}
		if c.entry != nil || c.kind != k || len(c.gens) != 1 || c.gens[0] != 42 {
			t.Errorf("negative %v: got %+v", k, c)
		}
	}
}

func TestCodecRejectsOtherVersion(t *testing.T) {
	v := appendValue(nil, nil, sampleEntries()[0], 0)
	v[0] = codecVersion + 1
	if _, err := decodeValue(v); err == nil {
		t.Fatal("value of another version decoded")
	}
}

func FuzzDecodeValue(f *testing.F) {
	for _, e := range sampleEntries() {
		f.Add(appendValue(nil, []uint64{1, 2}, e, 0))
	}
	f.Add(appendValue(nil, nil, nil, shoal.KindNotFound))
	f.Add([]byte{})
	f.Add([]byte{codecVersion, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeValue(b)
		if err != nil {
			return
		}
		if c.entry == nil && c.kind == 0 {
			t.Fatal("decoded neither entry nor negative kind")
		}
		// What decodes survives a round trip (varints may be overlong in
		// b, so compare decoded values, not bytes).
		c2, err := decodeValue(appendValue(nil, c.gens, c.entry, c.kind))
		if err != nil {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", c2, c)
		}
	})
}

// FuzzDecodePool: the default pool kept with the shared finding that no
// directory is mapped (pools.go) decodes to what was encoded, whatever
// the layout, and anything else decodes without panicking; what decodes
// survives a round trip.
func FuzzDecodePool(f *testing.F) {
	for _, l := range []string{"", "replica:1", "replica:3", "ec:4+2", "ec:10+4"} {
		p := shoal.Pool{Name: "default"}
		if l != "" {
			p.Layout, _ = shoal.ParseLayout(l)
		}
		b := appendPool(nil, p)
		if got, err := decodePool(b); err != nil || got != p {
			f.Fatalf("%+v decodes to %+v, %v", p, got, err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f, 'a'})
	f.Add([]byte{3, 'a', 'b'})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePool(b)
		if err != nil {
			return
		}
		if p2, err := decodePool(appendPool(nil, p)); err != nil || p2 != p {
			t.Fatalf("%+v re-encoded decodes to %+v, %v", p, p2, err)
		}
	})
}
