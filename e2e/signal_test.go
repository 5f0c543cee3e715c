package e2e

import (
	"fmt"
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

// TestSIGTERMFinishesInFlight: an upload in flight when SIGTERM arrives
// completes (201), shoal exits 0, and after a restart on the same data
// directory the file is there, byte for byte. In proxy mode the body
// streams through md; in redirect mode it goes straight to the data
// server, which commits through md's internal port while md's public port
// is already closed.
func TestSIGTERMFinishesInFlight(t *testing.T) {
	for _, mode := range []string{"proxy", "redirect"} {
		t.Run(mode, func(t *testing.T) { testSIGTERMInFlight(t, mode) })
	}
}

func testSIGTERMInFlight(t *testing.T, mode string) {
	curl := need(t, "curl")
	data := t.TempDir()
	// In proxy mode md writes the upload into its own data server (local
	// data); in redirect mode the upload goes to the data server's URL
	// (local data off), as in a cluster.
	n := startShoal(t, data, "SHOAL_MD_DATA_MODE="+mode, fmt.Sprintf("SHOAL_ALL_LOCAL_DATA=%v", mode != "redirect"))
	dir := t.TempDir()
	src, body := randomFile(t, dir, "body", 2<<20)

	target := n.URL + "/inflight.bin"
	if mode == "redirect" {
		// Ask md where to upload: with Expect: 100-continue curl sends no
		// body before md's 307, and without -L it stops there.
		out, code := run(t, dir, nil, curl, "-sS", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", "-H", "Expect: 100-continue", "-T", src, target)
		status, location, _ := strings.Cut(out, " ")
		if code != 0 || status != "307" || !strings.HasPrefix(location, n.DiskURL+"/") {
			t.Fatalf("PUT with Expect: exit %d, %q; want a 307 to %s/…", code, out, n.DiskURL)
		}
		target = location
	}

	// curl reads the body from a pipe we feed by hand: the upload is half
	// sent when the signal comes.
	put := exec.Command(curl, "-sS", "--fail-with-body", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Expect:", "-H", "Transfer-Encoding:", "-H", "Content-Length: "+strconv.Itoa(len(body)), "-T", "-", target)
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
	// The upload is in flight at the data server once it has a temp file.
	waitFor(t, 60*time.Second, "the upload's temp file on the data server", func() bool {
		return len(tempUploads(n.cmd.Process.Pid, filepath.Join(data, "disk"))) > 0
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
	if code := n.wait(t); code != 0 {
		t.Errorf("exit code after SIGTERM: %d, want 0", code)
	}

	n2 := startShoal(t, data, "SHOAL_MD_DATA_MODE="+mode)
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

// TestSIGTERMOneShutdownDeadline: uploads that never finish hold the
// shutdown for md.shutdown_timeout in all, not that long for each of
// shoal all's servers in turn (md, then its data server: twice as long,
// past a unit's TimeoutStopSec with the default), and the exit status
// says requests were cut.
func TestSIGTERMOneShutdownDeadline(t *testing.T) {
	curl := need(t, "curl")
	n := startShoal(t, "", "SHOAL_MD_DATA_MODE=proxy", "SHOAL_ALL_LOCAL_DATA=false", "SHOAL_MD_SHUTDOWN_TIMEOUT=2s")
	put := exec.Command(curl, "-sS", "-o", "/dev/null", "-H", "Expect:", "-H", "Transfer-Encoding:", "-H", "Content-Length: 1000000", "-T", "-", n.URL+"/stuck.bin")
	stdin, err := put.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := put.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { put.Process.Kill(); put.Wait() }()
	stdin.Write(make([]byte, 300_000)) // and no more: md and the data server both wait for the rest
	waitFor(t, 60*time.Second, "the upload's temp file on the data server", func() bool {
		return len(tempUploads(n.cmd.Process.Pid, filepath.Join(n.Data, "disk"))) > 0
	})
	start := time.Now()
	n.signal(syscall.SIGTERM)
	code := n.wait(t)
	took := time.Since(start)
	if code != 1 || !strings.Contains(n.stderr.String(), "requests still running after 2s") {
		t.Errorf("exit %d; want 1 and the requests cut named:\n%s", code, n.stderr)
	}
	if took >= 4*time.Second {
		t.Errorf("shutdown took %v with md.shutdown_timeout 2s: a timeout per server", took)
	}
}
