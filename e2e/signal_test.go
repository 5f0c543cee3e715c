package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMIdle: shoal all exits 0 on SIGTERM and SIGINT.
func TestSIGTERMIdle(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		n := startShoal(t, "")
		n.signal(sig)
		select {
		case <-n.exited:
		case <-time.After(60 * time.Second):
			t.Fatalf("%v: still running after 60s", sig)
		}
		if code := n.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("%v: exit code %d, want 0:\n%s", sig, code, n.stderr)
		}
	}
}

// TestSIGTERMFinishesInFlight: an upload streaming through md when SIGTERM
// arrives completes (201), shoal exits 0, and after a restart on the same
// data directory the file is there, byte for byte.
func TestSIGTERMFinishesInFlight(t *testing.T) {
	curl := need(t, "curl")
	data := t.TempDir()
	n := startShoal(t, data, "SHOAL_MD_DATA_MODE=proxy")
	dir := t.TempDir()
	_, body := randomFile(t, dir, "body", 2<<20)

	// curl reads the body from a pipe we feed by hand: the upload is half
	// sent when the signal comes.
	put := exec.Command(curl, "-sS", "--fail-with-body", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Expect:", "-H", "Transfer-Encoding:", "-H", "Content-Length: "+strconv.Itoa(len(body)), "-T", "-", n.URL+"/inflight.bin")
	stdin, err := put.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	put.Stdout, put.Stderr = &out, &out
	if err := put.Start(); err != nil {
		t.Fatal(err)
	}
	defer put.Process.Kill()
	half := len(body) / 2
	if _, err := stdin.Write(body[:half]); err != nil {
		t.Fatal(err)
	}
	// The upload is in flight at both md and the data server once the data
	// server has a temp file for it.
	waitFor(t, 60*time.Second, "the upload's temp file on the data server", func() bool {
		entries, _ := os.ReadDir(filepath.Join(data, "disk", "tmp"))
		return len(entries) > 0
	})
	n.signal(syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond) // let shutdown begin; the assertion holds either way
	if _, err := stdin.Write(body[half:]); err != nil {
		t.Fatalf("writing the rest of the body: %v", err)
	}
	stdin.Close()
	putDone := make(chan error, 1)
	go func() { putDone <- put.Wait() }()
	select {
	case err := <-putDone:
		if err != nil || out.String() != "201" {
			t.Errorf("in-flight PUT: %v, output %q, want 201", err, out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("in-flight PUT did not finish")
	}
	if code := n.stop(t); code != 0 {
		t.Errorf("exit code after SIGTERM: %d, want 0", code)
	}

	n2 := startShoal(t, data, "SHOAL_MD_DATA_MODE=proxy")
	got := filepath.Join(dir, "got")
	if o, code := run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-o", got, n2.URL+"/inflight.bin"); code != 0 {
		t.Fatalf("GET after restart: exit %d: %s", code, o)
	}
	checkFile(t, got, body)
}

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
