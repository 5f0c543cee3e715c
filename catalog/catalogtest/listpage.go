package catalogtest

import (
	"fmt"
	"testing"

	"shoal"
)

// testListPage: pages of a directory, in byte order, each starting after
// the last name of the one before, without inline content, with the dead
// properties of each entry when asked, and the errors of List.
func testListPage(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/p", "/p/B", "/p/sub", "/q")
	var want []string
	for i := range 23 {
		n := fmt.Sprintf("f%02d", i)
		putInline(t, c, "/p/"+n, "inline data "+n)
		want = append(want, n)
	}
	putObjects(t, c, "/p/z", "ab01", 10, "s1", "s2")
	putInline(t, c, "/p/é", "x")
	putInline(t, c, "/q/other", "not in /p")
	ok(t, c.PatchProps(ctx(t), "/p/f03", []shoal.Prop{{Space: "urn:x", Name: "b", Value: "2"}, {Space: "urn:x", Name: "a", Value: "1"}}, nil))
	ok(t, c.PatchProps(ctx(t), "/p/sub", []shoal.Prop{{Space: "urn:y", Name: "c", Value: "3"}}, nil))
	ok(t, c.PatchProps(ctx(t), "/q/other", []shoal.Prop{{Space: "urn:x", Name: "z", Value: "no"}}, nil))
	want = append([]string{"B"}, want...)
	want = append(want, "sub", "z", "é")

	for _, limit := range []int{1, 7, len(want), 100} {
		var listed []string
		after := ""
		for pages := 0; ; pages++ {
			if pages > len(want)+1 {
				t.Fatalf("limit %d: more pages than entries", limit)
			}
			p := got(c.ListPage(ctx(t), "/p", after, limit, true)).must(t)
			if len(p.Entries) > limit || len(p.Props) != len(p.Entries) {
				t.Fatalf("limit %d: page of %d entries, %d props", limit, len(p.Entries), len(p.Props))
			}
			for i, e := range p.Entries {
				listed = append(listed, e.Name())
				if e.Path != "/p/"+e.Name() || e.Inline != nil {
					t.Errorf("limit %d: entry %+v: want path /p/%s and no inline content", limit, e, e.Name())
				}
				var ps []string
				for _, pr := range p.Props[i] {
					ps = append(ps, pr.Space+" "+pr.Name+"="+pr.Value)
				}
				var wantProps []string
				switch e.Name() {
				case "f03":
					wantProps = []string{"urn:x a=1", "urn:x b=2"}
				case "sub":
					wantProps = []string{"urn:y c=3"}
				}
				if !equalStrings(ps, wantProps) {
					t.Errorf("limit %d: props of %s = %v, want %v", limit, e.Name(), ps, wantProps)
				}
				switch e.Name() {
				case "f05":
					if st := stat(t, c, e.Path); e.Size != 15 || e.IsDir || e.ID != st.ID || e.Version != st.Version ||
						!e.MTime.Equal(st.MTime) || !e.CTime.Equal(st.CTime) || e.Parent != st.Parent {
						t.Errorf("inline file in a page: %+v, want size 15 and %+v's id, version, times", e, st)
					}
				case "z":
					if st := stat(t, c, e.Path); e.Size != 10 || e.ETag() != st.ETag() {
						t.Errorf("file in a page: %+v, want size 10 and ETag %s", e, st.ETag())
					}
				case "B":
					if !e.IsDir {
						t.Errorf("B is a directory: %+v", e)
					}
				}
			}
			if !p.More {
				break
			}
			if len(p.Entries) == 0 {
				t.Fatalf("limit %d: an empty page says more follow", limit)
			}
			after = p.Entries[len(p.Entries)-1].Name()
		}
		if !equalStrings(listed, want) {
			t.Errorf("limit %d: listed %v, want %v", limit, listed, want)
		}
	}
	// Without props; starting in the middle, after a name that is absent.
	p := got(c.ListPage(ctx(t), "/p", "f10x", 3, false)).must(t)
	if !equalStrings(names(p.Entries), []string{"f11", "f12", "f13"}) || !p.More || p.Props != nil {
		t.Errorf("ListPage after f10x = %v more %v props %v, want [f11 f12 f13], more, no props", names(p.Entries), p.More, p.Props)
	}
	if p := got(c.ListPage(ctx(t), "/p", "é", 5, true)).must(t); len(p.Entries) != 0 || p.More {
		t.Errorf("ListPage after the last name = %v more %v, want empty", names(p.Entries), p.More)
	}
	if p := got(c.ListPage(ctx(t), "/p/sub", "", 5, true)).must(t); len(p.Entries) != 0 || p.More {
		t.Errorf("ListPage of an empty directory = %v more %v", names(p.Entries), p.More)
	}
	// A new name after the first page shows in a later page; one before
	// it does not, and nothing is listed twice.
	first := got(c.ListPage(ctx(t), "/p", "", 2, false)).must(t)
	putInline(t, c, "/p/A", "before")
	putInline(t, c, "/p/zz", "after")
	rest := got(c.ListPage(ctx(t), "/p", first.Entries[1].Name(), 100, false)).must(t)
	seen := map[string]int{}
	for _, e := range append(first.Entries, rest.Entries...) {
		seen[e.Name()]++
	}
	if seen["A"] != 0 || seen["zz"] != 1 || seen["f00"] != 1 || len(seen) != len(want)+1 {
		t.Errorf("pages around concurrent creates: %v", seen)
	}
	_, err := c.ListPage(ctx(t), "/nope", "", 5, false)
	wantKind(t, "ListPage missing", err, shoal.KindNotFound)
	_, err = c.ListPage(ctx(t), "/p/f01", "", 5, false)
	wantKind(t, "ListPage of a file", err, shoal.KindNotDir)
	_, err = c.ListPage(ctx(t), "/p", "", 0, false)
	wantKind(t, "ListPage limit 0", err, shoal.KindInvalid)
}

// testListSubtrees: a listing holds a directory's children, never what
// lies below them, whatever sorts beside a subdirectory's subtree ("x-1"
// and "x.t" before "x/…", "x0" after it), in pages of any size, with the
// children's properties; List agrees, and the root lists its children.
func testListSubtrees(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/s", "/s/x", "/s/x/deep", "/s/x0", "/s/y", "/s/y/z")
	for _, p := range []string{"/s/x/deep/f", "/s/x/f", "/s/x-1", "/s/x.t", "/s/x0/f", "/s/y/z/f", "/s/z"} {
		putInline(t, c, p, p)
	}
	ok(t, c.PatchProps(ctx(t), "/s/x0", []shoal.Prop{{Space: "urn:x", Name: "p", Value: "x0"}}, nil))
	ok(t, c.PatchProps(ctx(t), "/s/x/f", []shoal.Prop{{Space: "urn:x", Name: "p", Value: "below"}}, nil))
	want := []string{"x", "x-1", "x.t", "x0", "y", "z"}
	for _, limit := range []int{1, 2, 4, 100} {
		var listed []string
		for after, pages := "", 0; ; pages++ {
			if pages > len(want) {
				t.Fatalf("limit %d: more pages than entries", limit)
			}
			p := got(c.ListPage(ctx(t), "/s", after, limit, true)).must(t)
			for i, e := range p.Entries {
				listed = append(listed, e.Name())
				if e.Path != "/s/"+e.Name() {
					t.Errorf("limit %d: entry path %s", limit, e.Path)
				}
				wantProps := 0
				if e.Name() == "x0" {
					wantProps = 1
				}
				if len(p.Props[i]) != wantProps {
					t.Errorf("limit %d: props of %s = %v", limit, e.Path, p.Props[i])
				}
			}
			if !p.More || len(p.Entries) == 0 {
				break
			}
			after = p.Entries[len(p.Entries)-1].Name()
		}
		if !equalStrings(listed, want) {
			t.Errorf("limit %d: listed %v, want %v", limit, listed, want)
		}
	}
	if es := got(c.List(ctx(t), "/s")).must(t); !equalStrings(names(es), want) {
		t.Errorf("List /s = %v, want %v", names(es), want)
	}
	if p := got(c.ListPage(ctx(t), "/s", "x", 2, false)).must(t); !equalStrings(names(p.Entries), []string{"x-1", "x.t"}) || !p.More {
		t.Errorf("ListPage after the directory x = %v more %v, want [x-1 x.t], more", names(p.Entries), p.More)
	}
	if es := got(c.List(ctx(t), "/")).must(t); !equalStrings(names(es), []string{"s"}) {
		t.Errorf("List / = %v, want [s]", names(es))
	}
	if p := got(c.ListPage(ctx(t), "/", "", 5, true)).must(t); !equalStrings(names(p.Entries), []string{"s"}) || p.More {
		t.Errorf("ListPage / = %v more %v, want [s]", names(p.Entries), p.More)
	}
}
