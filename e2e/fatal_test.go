package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFatalLineFollowsLogFormat: the error that ends shoal is a JSON log
// line when logs are JSON (it was the plain "shoal: …" line, which a log
// shipper reading JSON cannot parse), and "shoal: …" otherwise.
func TestFatalLineFollowsLogFormat(t *testing.T) {
	dir := t.TempDir()
	out, code := run(t, dir, nil, shoalBin, "all", "--data", dir, "--listen", "127.0.0.1:65535", "--log-format", "json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var l struct{ Level, Msg, Err string }
	if code != 1 || json.Unmarshal([]byte(lines[len(lines)-1]), &l) != nil || l.Level != "ERROR" || l.Msg != "exiting" || !strings.Contains(l.Err, "disk.listen") {
		t.Errorf("JSON logs: exit %d, last line %q", code, lines[len(lines)-1])
	}
	out, code = run(t, dir, nil, shoalBin, "all", "--data", dir, "--listen", "127.0.0.1:65535")
	if code != 1 || !strings.HasPrefix(strings.TrimSpace(out), "shoal: md.listen") {
		t.Errorf("text logs: exit %d, %q", code, out)
	}
}
