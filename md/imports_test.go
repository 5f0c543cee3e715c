package md

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMDImports: md reaches data servers and gws over HTTP and leaves the
// admin work to the runners beside it, so neither the EC engine, the
// gateway, the data server, the jobs nor a catalog or cache
// implementation is among its dependencies (DESIGN).
func TestMDImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "shoal/md").Output()
	if err != nil {
		t.Fatalf("go list -deps shoal/md: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"shoal/gw", "shoal/ec", "shoal/diskserver", "shoal/jobs", "shoal/catalog", "shoal/cache"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("md depends on %s", dep)
			}
		}
	}
}
