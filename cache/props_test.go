package cache_test

import (
	"context"
	"fmt"
	"testing"

	"shoal"
	"shoal/cache"
)

// propsOf is B's answer for path's dead properties, as text.
func propsOf(t *testing.T, c *cache.Catalog, path string) string {
	t.Helper()
	ps, err := c.Props(context.Background(), path)
	if err != nil {
		return "error: " + shoal.KindOf(err).String()
	}
	return fmt.Sprint(ps)
}

// Dead properties cached in memcached by md B follow every mutation made
// through md A: B caches each answer first (proved by a hit), then A
// changes it, then B must answer the new one.
func TestPropsCoherenceTwoMDs(t *testing.T) {
	_, dsn := openSQLite(t)
	p := newPair(t, dsn, cache.Options{})
	ctx := context.Background()
	a, b := p.a, p.b
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	colour := func(v string) []shoal.Prop { return []shoal.Prop{{Space: "urn:x", Name: "colour", Value: v}} }
	// warmProps makes B cache path's props and checks the second ask hits.
	warmProps := func(path string) string {
		t.Helper()
		propsOf(t, b, path)
		before := b.Stats().Props.Hits
		got := propsOf(t, b, path)
		if b.Stats().Props.Hits != before+1 {
			t.Fatalf("Props(%s) twice: no L2 hit the second time", path)
		}
		return got
	}
	check := func(path, want string) {
		t.Helper()
		if got := propsOf(t, b, path); got != want {
			t.Errorf("B: Props(%s) = %s, want %s", path, got, want)
		}
	}
	none := fmt.Sprint([]shoal.Prop(nil))

	must(got(a.Mkdir(ctx, "/d", mtime)).err)
	must(got(a.PutInline(ctx, "/d/f", []byte("x"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).err)
	// PatchProps: set, then remove.
	warmProps("/d/f")
	must(a.PatchProps(ctx, "/d/f", colour("blue"), nil))
	check("/d/f", fmt.Sprint(colour("blue")))
	warmProps("/d/f")
	must(a.PatchProps(ctx, "/d/f", nil, colour("")))
	check("/d/f", none)
	// Overwrite drops the properties of the old file.
	must(a.PatchProps(ctx, "/d/f", colour("red"), nil))
	warmProps("/d/f")
	must(got(a.PutInline(ctx, "/d/f", []byte("y"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).err)
	innerAfter, _ := a.Inner().Props(ctx, "/d/f")
	check("/d/f", fmt.Sprint(innerAfter))
	// Move of the parent directory: old path gone, new path has them.
	must(a.PatchProps(ctx, "/d/f", colour("green"), nil))
	warmProps("/d/f")
	must(got(a.Move(ctx, "/d", "/e", false, grace)).err)
	check("/d/f", "error: not found")
	check("/e/f", fmt.Sprint(colour("green")))
	// Copy onto an existing file replaces its properties.
	must(got(a.PutInline(ctx, "/e/g", []byte("z"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).err)
	must(a.PatchProps(ctx, "/e/g", colour("grey"), nil))
	warmProps("/e/g")
	must(got(a.Copy(ctx, "/e/f", "/e/g", true, grace)).err)
	check("/e/g", fmt.Sprint(colour("green")))
	// Remove.
	warmProps("/e/f")
	must(a.Remove(ctx, "/e", grace))
	check("/e/f", "error: not found")
}
