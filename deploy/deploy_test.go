// Package deploy holds the deployment recipes (deploy/arm, deploy/vm); its
// tests keep them honest: the guides' "ci: run" blocks run as written, the
// systemd units verify, and cloud-init carries the same files as the folder.
package deploy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// need returns tool's path, or fails (CI=true) or skips the test.
func need(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (CI=true: install it, see .ci/run)", tool)
	}
	t.Skipf("%s is not installed", tool)
	return ""
}

// ciBlocks returns the ```sh blocks of a Markdown file that follow a line
// "<!-- ci: run -->".
func ciBlocks(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	marked, in := false, false
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.TrimSpace(line) == "<!-- ci: run -->":
			marked = true
		case marked && !in && line == "```sh":
			in = true
		case in && line == "```":
			blocks = append(blocks, cur.String())
			cur.Reset()
			in, marked = false, false
		case in:
			cur.WriteString(line + "\n")
		}
	}
	return blocks
}

func TestGuides(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the guides build binaries and run them under qemu")
	}
	for _, g := range []struct {
		readme string
		tools  []string
	}{
		{"arm/README.md", []string{"bash", "make", "curl", "qemu-arm", "sha256sum"}},
		{"vm/README.md", []string{"bash", "make", "curl", "nginx"}},
	} {
		t.Run(filepath.Dir(g.readme), func(t *testing.T) {
			for _, tool := range g.tools {
				need(t, tool)
			}
			blocks := ciBlocks(t, g.readme)
			if len(blocks) == 0 {
				t.Fatalf("%s has no <!-- ci: run --> block", g.readme)
			}
			for _, block := range blocks {
				runBlock(t, block)
			}
		})
	}
}

// runBlock runs a guide's block with bash -euo pipefail from the
// repository root in its own process group, which is killed afterwards
// (whatever the block left running). The bound is a guard against a
// hang, not a measure: the ARM guide's `make cross` builds four release
// binaries, which on an empty build cache, beside the rest of `make
// test`, took more than 8 min.
func runBlock(t *testing.T, block string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", block)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("block failed after %v: %v\n--- block\n%s--- output\n%s", time.Since(start).Round(time.Second), err, block, out.String())
	}
	t.Logf("block ran in %v", time.Since(start).Round(time.Second))
}

// TestUnitsVerify runs systemd-analyze verify on every unit, with
// ExecStart pointing at a freshly built binary (verify checks it exists).
func TestUnitsVerify(t *testing.T) {
	analyze := need(t, "systemd-analyze")
	units, err := filepath.Glob("*/*.service")
	if err != nil || len(units) == 0 {
		t.Fatalf("no units found: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "shoal")
	build := exec.Command("go", "build", "-o", bin, "shoal/cmd/shoal")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, u := range units {
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("ExecStart=/usr/local/bin/shoal ")) {
			t.Errorf("%s: ExecStart is not /usr/local/bin/shoal", u)
		}
		// One directory per source folder: arm and vm both have shoal-md.service.
		d := filepath.Join(dir, filepath.Dir(u))
		os.MkdirAll(d, 0o755)
		b = bytes.ReplaceAll(b, []byte("/usr/local/bin/shoal"), []byte(bin))
		if err := os.WriteFile(filepath.Join(d, filepath.Base(u)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(analyze, "verify", filepath.Join(d, filepath.Base(u))).CombinedOutput()
		var ours []string
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, filepath.Base(u)) {
				ours = append(ours, line)
			}
		}
		if err != nil || len(ours) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", u, err, out)
		}
	}
}

// TestCloudInitCarriesTheFolderFiles: every file cloud-init writes that
// has a twin in deploy/vm is identical to it, so the two cannot drift.
func TestCloudInitCarriesTheFolderFiles(t *testing.T) {
	b, err := os.ReadFile("vm/cloud-init.user-data")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("#cloud-config\n")) {
		t.Error("user-data must start with #cloud-config")
	}
	var doc struct {
		WriteFiles []struct {
			Path    string `yaml:"path"`
			Content string `yaml:"content"`
		} `yaml:"write_files"`
		RunCmd []any `yaml:"runcmd"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("cloud-init.user-data is not YAML: %v", err)
	}
	twins := 0
	for _, f := range doc.WriteFiles {
		twin := filepath.Join("vm", filepath.Base(f.Path))
		want, err := os.ReadFile(twin)
		if err != nil {
			continue // e.g. the secret
		}
		twins++
		if f.Content != string(want) {
			t.Errorf("cloud-init's %s differs from %s", f.Path, twin)
		}
	}
	if twins < 2 {
		t.Errorf("cloud-init carries %d of deploy/vm's files, want the config and the unit", twins)
	}
	if len(doc.RunCmd) == 0 {
		t.Error("no runcmd: nothing installs the binary or starts the unit")
	}
}
