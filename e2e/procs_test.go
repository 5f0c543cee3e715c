package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is a running `shoal md` or `shoal disk`: the fields it printed
// before "ready" (md, disk, id) and its stderr.
type proc struct {
	fields map[string]string
	*node
}

// startProc runs `shoal ARGS…` and waits for it to print "ready"; it is
// killed when the test ends.
func startProc(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(shoalBin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{fields: map[string]string{}, node: &node{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.exitErr = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.signal(syscall.SIGKILL)
		<-p.exited
		if t.Failed() {
			t.Logf("shoal %s stderr:\n%s", args[0], tail(p.stderr.String(), 4000))
		}
	})
	ready := make(chan map[string]string, 1)
	go func() {
		fields := map[string]string{}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), " ")
			if k == "ready" {
				ready <- fields
				io.Copy(io.Discard, stdout)
				return
			}
			fields[k] = strings.TrimRight(strings.TrimSpace(v), "/")
		}
		close(ready)
	}()
	select {
	case f, ok := <-ready:
		if !ok {
			<-p.exited
			t.Fatalf("shoal %v exited before ready: %v\n%s", args, p.exitErr, p.stderr)
		}
		p.fields = f
		p.URL = f["md"]
		p.DiskURL = f["disk"]
	case <-time.After(60 * time.Second):
		t.Fatalf("shoal %v not ready after 60s\n%s", args, p.stderr)
	}
	return p
}

// startMD runs `shoal md` on a random loopback port over dsn, with
// memcached when mc is not empty, and extra flags.
func startMD(t *testing.T, dsn, mc, secret string, env []string, extra ...string) *proc {
	t.Helper()
	args := []string{"md", "--listen", "127.0.0.1:0", "--catalog", dsn, "--secret-file", secret, "--log-level", "debug"}
	if mc != "" {
		args = append(args, "--memcached", mc)
	}
	return startProc(t, env, append(args, extra...)...)
}

// startDisk runs `shoal disk` over a temp dir, heartbeating to mdURL, and
// waits until md lists it as a live server.
func startDisk(t *testing.T, mdURL, secret string, env ...string) *proc {
	t.Helper()
	d := startProc(t, env, "disk", "--listen", "127.0.0.1:0", "--md", mdURL, "--data", t.TempDir(), "--secret-file", secret)
	waitLive(t, mdURL, secret, d.fields["id"])
	return d
}

// waitLive waits until md at mdURL lists data server id, which it does
// from the server's first heartbeat: a data server prints "ready" before
// it, so a write sent at once could find no live server (507) on a loaded
// machine.
func waitLive(t *testing.T, mdURL, secret, id string) {
	t.Helper()
	waitFor(t, 30*time.Second, "md to list data server "+id, func() bool {
		ids, err := serverIDs(t, mdURL, secret)
		return err == nil && ids[id]
	})
}

// serverIDs is the set of server ids md at mdURL lists (`shoal admin
// servers --json`; extra: more admin flags, such as --ca-file).
func serverIDs(t *testing.T, mdURL, secret string, extra ...string) (map[string]bool, error) {
	t.Helper()
	args := append([]string{"admin", "servers", "--json", "--md", mdURL, "--secret-file", secret}, extra...)
	out, code := run(t, "", nil, shoalBin, args...)
	if code != 0 {
		return nil, fmt.Errorf("shoal admin servers: exit %d: %s", code, out)
	}
	var servers []struct{ ID string }
	if err := json.Unmarshal([]byte(out), &servers); err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	ids := map[string]bool{}
	for _, s := range servers {
		ids[s.ID] = true
	}
	return ids, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// client is an HTTP client that does not follow redirects (md's 302/307
// are answers to check, not to follow) and gives up after 10 s.
var client = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport:     &http.Transport{MaxIdleConnsPerHost: 64},
}

// reply is a finished HTTP exchange.
type reply struct {
	status int
	header http.Header
	body   string
}

// do sends one request; a transport error is status 0 with the error as
// body (fault tests count them).
func do(method, url string, body string, header ...string) reply {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{body: err.Error()}
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return reply{body: err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

func (r reply) String() string { return fmt.Sprintf("%d %q", r.status, strings.TrimSpace(r.body)) }
