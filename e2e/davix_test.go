package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestDavix puts, gets and lists with the davix tools (the grid's HTTP
// client) in every data mode with shoal all's own data served by md
// (all.local_data, the default), and through the data server's redirects
// (local_data off, as in a cluster), bytes compared.
func TestDavix(t *testing.T) {
	for _, mode := range []string{"redirect", "auto", "proxy"} {
		t.Run(mode, func(t *testing.T) { testDavix(t, mode, true) })
	}
	for _, mode := range []string{"redirect", "auto"} {
		t.Run(mode+"-no-local", func(t *testing.T) { testDavix(t, mode, false) })
	}
}

func testDavix(t *testing.T, mode string, local bool) {
	put := need(t, "davix-put")
	get := need(t, "davix-get")
	ls := need(t, "davix-ls")
	mkdir := need(t, "davix-mkdir")
	n := startShoal(t, "", "SHOAL_MD_DATA_MODE="+mode, fmt.Sprintf("SHOAL_ALL_LOCAL_DATA=%v", local))
	dir := t.TempDir()

	if out, code := run(t, dir, nil, mkdir, n.URL+"/grid/"); code != 0 {
		t.Fatalf("davix-mkdir: exit %d: %s", code, out)
	}
	files := map[string][]byte{}
	for name, size := range map[string]int{"a.dat": 1000, "b.dat": 1 << 20, "c.dat": 3<<20 + 17} {
		src, data := randomFile(t, dir, name, size)
		files[name] = data
		if out, code := run(t, dir, nil, put, src, n.URL+"/grid/"+name); code != 0 {
			t.Fatalf("davix-put %s: exit %d: %s", name, code, out)
		}
	}
	for name, want := range files {
		got := filepath.Join(dir, name+".got")
		if out, code := run(t, dir, nil, get, n.URL+"/grid/"+name, got); code != 0 {
			t.Fatalf("davix-get %s: exit %d: %s", name, code, out)
		}
		checkFile(t, got, want)
	}
	out, code := run(t, dir, nil, ls, n.URL+"/grid/")
	if code != 0 {
		t.Fatalf("davix-ls: exit %d: %s", code, out)
	}
	listed := strings.Fields(out)
	for name := range files {
		found := false
		for _, l := range listed {
			found = found || strings.TrimSuffix(l, "/") == name
		}
		if !found {
			t.Errorf("davix-ls /grid/ does not list %s:\n%s", name, out)
		}
	}
	if len(listed) != len(files) {
		t.Errorf("davix-ls /grid/ lists %d names, want %d:\n%s", len(listed), len(files), out)
	}
}
