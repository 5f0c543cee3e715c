package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminQuota: `shoal admin quota set|ls|rm` through md's signed admin
// API; a quota set on a directory that holds files counts them, curl
// sees a PUT over it refused with 507 and DAV:quota-not-exceeded, and
// quota-available-bytes of the directory is the room left.
func TestAdminQuota(t *testing.T) {
	curl := need(t, "curl")
	n := startShoal(t, "")
	admin := func(args ...string) (string, int) {
		return run(t, "", nil, shoalBin, append([]string{"admin", "--md", n.URL, "--secret-file", filepath.Join(n.Data, "secret"), "quota"}, args...)...)
	}
	if r := do("MKCOL", n.URL+"/home", ""); r.status != 201 {
		t.Fatal(r)
	}
	if r := do("PUT", n.URL+"/home/a", strings.Repeat("x", 3000)); r.status != 201 {
		t.Fatal(r)
	}
	out, code := admin("set", "/home", "--bytes", "10KiB", "--files", "5")
	if code != 0 || !strings.Contains(out, "/home") || !strings.Contains(out, "2.9 KiB") || !strings.Contains(out, "29%") {
		t.Fatalf("quota set: exit %d\n%s", code, out)
	}
	if out, code := admin("set", "/home/a", "--bytes", "1KiB"); code == 0 || !strings.Contains(out, "not a directory") {
		t.Errorf("quota set on a file: exit %d\n%s", code, out)
	}
	body := strings.Repeat("y", 8000)
	o, code := run(t, "", nil, curl, "-sS", "-L", "-X", "PUT", "--data-binary", body, "-w", "\n%{http_code}", n.URL+"/home/big")
	if code != 0 || !strings.HasSuffix(strings.TrimSpace(o), "507") || !strings.Contains(o, "<D:quota-not-exceeded/>") {
		t.Errorf("curl PUT over the quota: exit %d\n%s", code, o)
	}
	o, _ = run(t, "", nil, curl, "-sS", "-X", "PROPFIND", "-H", "Depth: 0", "--data",
		`<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:quota-available-bytes/><D:quota-used-bytes/></D:prop></D:propfind>`, n.URL+"/home/")
	if !strings.Contains(o, "<D:quota-available-bytes>7240</D:quota-available-bytes>") || !strings.Contains(o, "<D:quota-used-bytes>3000</D:quota-used-bytes>") {
		t.Errorf("PROPFIND of the quota properties:\n%s", o)
	}
	out, code = admin("ls")
	if code != 0 || !strings.Contains(out, "DIR") || !strings.Contains(out, "10.0 KiB") {
		t.Errorf("quota ls: exit %d\n%s", code, out)
	}
	// A set changes only the limits it names: the byte limit stays when
	// the entry limit changes, and goes only when given as 0.
	out, code = admin("set", "/home", "--files", "200")
	if code != 0 || !strings.Contains(out, "10.0 KiB") || !strings.Contains(out, "200") {
		t.Errorf("quota set --files alone: exit %d, want the byte limit kept\n%s", code, out)
	}
	if r := do("PUT", n.URL+"/home/big", body); r.status != 507 {
		t.Errorf("PUT over the byte limit after changing the entry limit: %s, want 507", r)
	}
	out, code = admin("set", "/home", "--bytes", "0")
	if fields := strings.Fields(lastLine(out)); code != 0 || len(fields) < 4 || fields[len(fields)-1] != "200" || !strings.Contains(lastLine(out), "  -  ") {
		t.Errorf("quota set --bytes 0: exit %d, want the byte limit gone and the entry limit kept\n%s", code, out)
	}
	if out, code := admin("set", "/home", "--files", "0"); code == 0 || !strings.Contains(out, "remove its quota") {
		t.Errorf("quota set removing the last limit: exit %d\n%s", code, out)
	}
	if out, code := admin("set", "/home"); code == 0 || !strings.Contains(out, "give --bytes, --files or both") {
		t.Errorf("quota set without a limit: exit %d\n%s", code, out)
	}
	if out, code := admin("set", "/home", "--bytes", "10KiB"); code != 0 || !strings.Contains(out, "10.0 KiB") || !strings.Contains(out, "200") {
		t.Errorf("quota set --bytes alone: exit %d, want the entry limit kept\n%s", code, out)
	}
	if out, code := admin("rm", "/home"); code != 0 {
		t.Errorf("quota rm: exit %d\n%s", code, out)
	}
	if out, code := admin("rm", "/home"); code == 0 || !strings.Contains(out, "no quota") {
		t.Errorf("quota rm twice: exit %d\n%s", code, out)
	}
	if r := do("PUT", n.URL+"/home/big", body); r.status != 201 {
		t.Errorf("PUT once the quota is gone: %s", r)
	}
}

// lastLine is the last non-empty line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
