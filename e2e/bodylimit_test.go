package e2e

import (
	"io"
	"path/filepath"
	"regexp"
	"testing"
)

// TestCurlBodyCutGets413: a PUT whose body is cut past a limit —
// md.max_put_body on a chunked body, or a quota's room — gets its 413
// in curl, whatever the body's size, and changes nothing. curl sends a
// chunked body as fast as the socket takes it: closed at once with its
// bytes unread, the connection was reset and curl failed with "Send
// failure" (exit 55) instead, and below the limit's 413 md answered 400.
// The 100 MiB body is beyond what md reads and drops before answering.
func TestCurlBodyCutGets413(t *testing.T) {
	curl := need(t, "curl")
	n := startShoal(t, "", "SHOAL_MD_MAX_PUT_BODY=1MiB")
	if r := do("MKCOL", n.URL+"/q", ""); r.status != 201 {
		t.Fatal(r)
	}
	out, code := run(t, "", nil, shoalBin, "admin", "--md", n.URL, "--secret-file", filepath.Join(n.Data, "secret"), "quota", "set", "/q", "--bytes", "512KiB")
	if code != 0 {
		t.Fatalf("quota set: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		path string
		size int64
	}{
		{"/over", 2 << 20}, {"/over", 100 << 20}, // max_put_body
		{"/q/over", 2 << 20}, {"/q/over", 100 << 20}, // the quota's room
	} {
		out, code := runInput(t, io.LimitReader(zeros{}, c.size), "", nil, curl, "-sS", "-T", "-", "-o", "/dev/null", "-w", "%{http_code}", n.URL+c.path)
		if code != 0 || out != "413" {
			t.Errorf("chunked PUT of %d bytes to %s: curl exit %d, %q; want exit 0 and 413", c.size, c.path, code, out)
		}
		if r := do("HEAD", n.URL+c.path, ""); r.status != 404 {
			t.Errorf("HEAD %s after the refused PUT: %d, want 404", c.path, r.status)
		}
	}
	out, code = run(t, "", nil, shoalBin, "admin", "--md", n.URL, "--secret-file", filepath.Join(n.Data, "secret"), "quota", "ls")
	if code != 0 || !regexp.MustCompile(`(?m)^/q\s+0 B\s+0 B\s`).MatchString(out) {
		t.Errorf("quota ls after the refused PUTs: exit %d, want /q with 0 B used and reserved\n%s", code, out)
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
