// Package e2e tests the real shoal binary with real clients: litmus, curl
// and davix talk to `shoal all` over loopback, and the operator commands
// (admin fsck, signals) are run as an operator would.
package e2e

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"shoal/internal/testlog"
)

// shoalBin is the binary under test, built once by TestMain.
var shoalBin string

const (
	stampVersion = "v0.0.0-e2e"
	stampCommit  = "e2ecommit"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "shoal-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shoalBin = filepath.Join(dir, "shoal")
	// Stamped as the Makefile stamps releases, so TestVersion sees the -X flags work.
	build := exec.Command("go", "build", "-ldflags", "-X main.version="+stampVersion+" -X main.commit="+stampCommit, "-o", shoalBin, "shoal/cmd/shoal")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building shoal:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// need returns the path of tool, or fails (CI=true) or skips the test.
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

// node is a running `shoal all`.
type node struct {
	URL     string // md base URL, no trailing slash
	DiskURL string // data server base URL
	GWURL   string // the built-in gw's base URL (with several --data dirs), else empty
	Data    string // --data directory
	cmd     *exec.Cmd
	stderr  *lockedBuffer
	exited  chan struct{}
	exitErr error
}

type lockedBuffer = testlog.Buffer

// startShoal runs `shoal all` on loopback random ports over data (a new
// temp dir when empty), with extra environment (e.g. SHOAL_MD_DATA_MODE),
// and waits for it to print its URLs and "ready". The node is stopped at
// the end of the test.
func startShoal(t *testing.T, data string, env ...string) *node {
	t.Helper()
	return startShoalArgs(t, data, nil, env...)
}

// startShoalArgs is startShoal with extra command-line arguments.
func startShoalArgs(t *testing.T, data string, args []string, env ...string) *node {
	t.Helper()
	if data == "" {
		data = t.TempDir()
	}
	argv := append([]string{"all", "--data", data, "--listen", "127.0.0.1:0", "--disk-listen", "127.0.0.1:0", "--log-level", "debug"}, args...)
	cmd := exec.Command(shoalBin, argv...)
	cmd.Env = append(os.Environ(), env...)
	return runNode(t, cmd, data, "shoal all", 60*time.Second)
}

// runNode starts cmd, a `shoal all`, and waits up to wait for it to print
// its md and disk URLs and "ready"; stdout is drained after. The process
// is killed at the end of the test, its stderr logged if the test failed.
func runNode(t *testing.T, cmd *exec.Cmd, data, name string, wait time.Duration) *node {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	n := &node{Data: data, cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = n.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		n.exitErr = cmd.Wait()
		close(n.exited)
	}()
	t.Cleanup(func() {
		n.signal(syscall.SIGKILL)
		<-n.exited
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, n.stderr)
		}
	})

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	timeout := time.After(wait)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				<-n.exited
				t.Fatalf("%s exited before ready: %v\n%s", name, n.exitErr, n.stderr)
			}
			field, value, _ := strings.Cut(line, " ")
			value = strings.TrimRight(strings.TrimSpace(value), "/")
			switch field {
			case "md":
				n.URL = value
			case "disk":
				n.DiskURL = value
			case "gw":
				n.GWURL = value
			case "ready":
				if n.URL == "" || n.DiskURL == "" {
					t.Fatalf("%s: ready before printing md and disk URLs", name)
				}
				go func() { // keep draining stdout
					for range lines {
					}
				}()
				return n
			}
		case <-timeout:
			t.Fatalf("%s not ready after %v:\n%s", name, wait, n.stderr)
		}
	}
}

func (n *node) signal(sig os.Signal) {
	select {
	case <-n.exited:
	default:
		n.cmd.Process.Signal(sig)
	}
}

// stop sends SIGTERM and returns the exit code (-1 if killed after 60s).
func (n *node) stop(t *testing.T) int {
	t.Helper()
	n.signal(syscall.SIGTERM)
	return n.wait(t)
}

// wait waits for the process to exit, after a signal sent earlier (a
// second signal would kill it), and returns its exit code (-1 if killed
// after 60s or by a signal).
func (n *node) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-n.exited:
	case <-time.After(60 * time.Second):
		n.signal(syscall.SIGKILL)
		<-n.exited
		t.Errorf("shoal all still running 60s after SIGTERM")
		return -1
	}
	return n.cmd.ProcessState.ExitCode()
}

// run runs a client command with a time limit and returns its combined
// output and exit code.
func run(t *testing.T, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	return runInput(t, nil, dir, env, name, args...)
}

// runInput is run with stdin as the command's standard input.
func runInput(t *testing.T, stdin io.Reader, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = stdin
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s %q: still running after 5 minutes; output:\n%s", name, args, out.String())
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// randomFile writes size random bytes to a new file in dir.
func randomFile(t *testing.T, dir, name string, size int) (string, []byte) {
	t.Helper()
	b := make([]byte, size)
	rand.Read(b)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, b
}
