package catalogtest

import (
	"strings"
	"testing"

	"shoal"
)

// testLongPathsMoveCopy: a MOVE or COPY whose destination would make a
// path below it longer than shoal.MaxPathLen is refused
// (KindURITooLong) and changes nothing — it made entries no request could
// name (414) — while a destination that keeps every path within bounds
// works.
func testLongPathsMoveCopy(t *testing.T, c shoal.Catalog) {
	seg := strings.Repeat("b", 200)
	deep := "/deep"
	mkdir(t, c, deep, "/ren")
	for len(deep)+1+len(seg) <= 3900 {
		deep += "/" + seg
		mkdir(t, c, deep)
	}
	leaf := deep + "/f"
	putInline(t, c, leaf, "x")
	parent := "/ren/" + strings.Repeat("c", 250)
	mkdir(t, c, parent)
	longDst := parent + "/" + strings.Repeat("d", 250) // the leaf would pass 4096 bytes
	for _, op := range []struct {
		name string
		fn   func(src, dst string) (bool, error)
	}{
		{"Move", func(src, dst string) (bool, error) { return c.Move(ctx(t), src, dst, false, grace) }},
		{"Copy", func(src, dst string) (bool, error) { return c.Copy(ctx(t), src, dst, false, grace) }},
	} {
		_, err := op.fn("/deep", longDst)
		wantKind(t, op.name+" making a path too long", err, shoal.KindURITooLong)
		stat(t, c, leaf)
		wantMissing(t, c, longDst)
		if l := got(c.List(ctx(t), parent)).must(t); len(l) != 0 {
			t.Errorf("%s refused, its destination's parent lists %d entries", op.name, len(l))
		}
	}
	got(c.Move(ctx(t), "/deep", "/ren/d", false, grace)).must(t)
	stat(t, c, "/ren/d"+leaf[len("/deep"):])
	wantMissing(t, c, leaf)
}
