package md

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// TestMDImports: md reaches data servers and gws over HTTP and leaves the
// admin work to the runners beside it, so neither the EC engine, the
// gateway, the data server, the jobs nor a catalog or cache
// implementation is among its dependencies (DESIGN). The sources are
// read with go/build, not the go command, so this runs under qemu too.
func TestMDImports(t *testing.T) {
	seen := map[string]bool{}
	var walk func(pkg string)
	walk = func(pkg string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		p, err := build.ImportDir(filepath.Join("..", strings.TrimPrefix(pkg, "shoal")), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			if imp == "shoal" || strings.HasPrefix(imp, "shoal/") {
				walk(imp)
			}
		}
	}
	walk("shoal/md")
	if !seen["shoal/wire"] || !seen["shoal"] {
		t.Fatalf("the walk missed md's known imports: %v", seen)
	}
	for dep := range seen {
		for _, banned := range []string{"shoal/gw", "shoal/ec", "shoal/diskserver", "shoal/jobs", "shoal/catalog", "shoal/cache"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("md depends on %s", dep)
			}
		}
	}
}
