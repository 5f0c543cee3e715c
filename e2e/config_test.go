package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestConfigSources: the real binary takes md.data_mode from a config
// file, lets SHOAL_MD_DATA_MODE override the file and a flag override
// both, as the README promises. The mode is observed from outside: a GET
// of a file on the data server is a 302 in redirect mode and a 200 from
// md in proxy mode.
func TestConfigSources(t *testing.T) {
	curl := need(t, "curl")
	dir := t.TempDir()
	file := filepath.Join(dir, "shoal.yaml")
	if err := os.WriteFile(file, []byte("md:\n  data_mode: redirect\nall:\n  local_data: false # md would serve its own data whatever the mode\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, _ := randomFile(t, dir, "f.bin", 64<<10)
	for _, tc := range []struct {
		name   string
		args   []string
		env    []string
		status string
	}{
		{"file", []string{"--config", file}, nil, "302"},
		{"env over file", []string{"--config", file}, []string{"SHOAL_MD_DATA_MODE=proxy"}, "200"},
		{"env names the file", nil, []string{"SHOAL_CONFIG=" + file}, "302"},
		{"flag over env", []string{"--config", file, "--data-mode", "redirect"}, []string{"SHOAL_MD_DATA_MODE=proxy"}, "302"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startShoalArgs(t, "", tc.args, tc.env...)
			if out, code := run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-T", src, n.URL+"/f.bin"); code != 0 {
				t.Fatalf("PUT: exit %d: %s", code, out)
			}
			out, code := run(t, dir, nil, curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", n.URL+"/f.bin")
			if code != 0 || out != tc.status {
				t.Errorf("GET without -L: status %q, want %s", out, tc.status)
			}
		})
	}
}

// TestConfigRejected: an unknown key or a bad value stops shoal before it
// serves, with a message naming the key.
func TestConfigRejected(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file, env, want string
	}{
		{"md:\n  data_mod: proxy\n", "", "data_mod"},
		{"", "SHOAL_MD_DATA_MODE=sideways", "md.data_mode"},
		{"cache:\n  timeout: soon\n", "", "timeout"},
	} {
		args := []string{"all", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--disk-listen", "127.0.0.1:0"}
		if tc.file != "" {
			f := filepath.Join(dir, "bad.yaml")
			if err := os.WriteFile(f, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--config", f)
		}
		var env []string
		if tc.env != "" {
			env = []string{tc.env}
		}
		out, code := run(t, dir, env, shoalBin, args...)
		if code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%q %q: exit %d, output %q; want failure naming %q", tc.file, tc.env, code, out, tc.want)
		}
	}
}

// TestVersion: the -X stamps reach `shoal version`.
func TestVersion(t *testing.T) {
	out, code := run(t, "", nil, shoalBin, "version")
	for _, want := range []string{stampVersion, stampCommit, runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("shoal version: exit %d, output %q lacks %q", code, out, want)
		}
	}
}
