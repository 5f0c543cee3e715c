package testsvc

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Memcached starts a real memcached on a free loopback port for the rest
// of the test and returns its host:port. Unlike MariaDB, each test gets its
// own process: memcached starts in milliseconds, and a private one lets a
// test kill it (StartMemcached) or rely on it being empty.
func Memcached(t testing.TB) string {
	return StartMemcached(t).Addr
}

// MemcachedProcess is a memcached started by StartMemcached, which a
// fault test may kill and restart on the same address.
type MemcachedProcess struct {
	Addr string
	t    testing.TB
	bin  string
	port string
	mu   sync.Mutex
	cmd  *exec.Cmd
}

// StartMemcached starts `memcached -l 127.0.0.1 -p PORT -U 0 -m 64`,
// killed when the test ends. A missing memcached binary fails the test
// when CI=true and skips it otherwise.
func StartMemcached(t testing.TB) *MemcachedProcess {
	t.Helper()
	bin := NeedTool(t, "memcached")
	// Another process may take the port between our probe and memcached's
	// bind: try a few ports.
	for attempt := 0; attempt < 5; attempt++ {
		n, err := FreePort()
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		port := strconv.Itoa(n)
		p := &MemcachedProcess{Addr: net.JoinHostPort("127.0.0.1", port), t: t, bin: bin, port: port}
		if err := p.start(); err != nil {
			t.Logf("memcached on port %s: %v; retrying", port, err)
			continue
		}
		t.Cleanup(p.Kill)
		return p
	}
	t.Fatal("could not start memcached")
	return nil
}

func (p *MemcachedProcess) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(p.bin, "-l", "127.0.0.1", "-p", p.port, "-U", "0", "-m", "64")
	cmd.SysProcAttr = childAttr()
	if os.Geteuid() == 0 {
		cmd.Args = append(cmd.Args, "-u", "root") // memcached refuses root without it
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			p.cmd = cmd
			return nil
		}
		select {
		case err := <-exited:
			return err
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			return err
		}
	}
}

// Kill stops memcached with SIGKILL (kill -9) and waits until it is gone.
// Killing a stopped process does nothing.
func (p *MemcachedProcess) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Kill()
	// Wait is already running in start's goroutine; wait for the port to close.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", p.Addr, 100*time.Millisecond)
		if err != nil {
			break
		}
		conn.Close()
		time.Sleep(10 * time.Millisecond)
	}
	p.cmd = nil
}

// Restart starts a fresh, empty memcached on the same address.
func (p *MemcachedProcess) Restart() {
	p.t.Helper()
	p.Kill()
	if err := p.start(); err != nil {
		p.t.Fatalf("restarting memcached on %s: %v", p.Addr, err)
	}
}
