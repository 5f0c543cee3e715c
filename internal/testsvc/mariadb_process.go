package testsvc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// MariaDBProcess is a private mariadbd that a fault test may stop and
// start again on the same port and datadir (the shared server of MariaDB
// must never be stopped: other tests use it).
type MariaDBProcess struct {
	// DSN is "mysql://USER:PASS@127.0.0.1:PORT/shoal", a database created
	// at start; it stays valid across Stop and Start.
	DSN  string
	Port int
	t    testing.TB
	mu   sync.Mutex
	s    *mariaServer
}

// StartMariaDB starts a mariadbd of the test's own (fresh datadir, free
// port), stopped and removed when the test ends. Without mariadbd:
// t.Fatal under CI=true, else t.Skip. It costs a few seconds
// (mariadb-install-db), so use MariaDB unless the test stops the server.
func StartMariaDB(t testing.TB) *MariaDBProcess {
	t.Helper()
	s := &mariaServer{}
	if err, skip := s.install(); err != nil {
		if skip {
			Missing(t, "mariadb: %v", err)
		}
		t.Fatalf("mariadb: %v", err)
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if s.port, err = FreePort(); err != nil {
			break
		}
		if err = s.launch(); err == nil {
			break
		}
	}
	if err != nil {
		os.RemoveAll(s.dir)
		t.Fatalf("mariadb: %v", err)
	}
	p := &MariaDBProcess{Port: s.port, t: t, s: s}
	t.Cleanup(s.stop)
	admin, err := s.open("")
	if err != nil {
		t.Fatalf("mariadb: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE shoal"); err != nil {
		t.Fatalf("mariadb: create database: %v", err)
	}
	p.DSN = fmt.Sprintf("mysql://%s:%s@127.0.0.1:%d/shoal", mariaUser, mariaPass, s.port)
	return p
}

// Stop shuts mariadbd down cleanly (SIGTERM) and waits until it has
// exited; its port is then closed (connections are refused). Stopping a
// stopped server does nothing.
func (p *MariaDBProcess) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.s.halt()
}

// Start starts the stopped server again on the same port and datadir and
// waits until it answers. Starting a running server does nothing.
func (p *MariaDBProcess) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.s.cmd != nil {
		return
	}
	if err := p.s.launch(); err != nil {
		p.t.Fatalf("restarting mariadb on port %d: %v", p.Port, err)
	}
}

// Pause freezes mariadbd (SIGSTOP): connections stay open but nothing
// answers, as with a hung server or a network that drops packets.
func (p *MariaDBProcess) Pause() {
	p.signal(syscall.SIGSTOP)
	// SIGSTOP is asynchronous: a query sent right after kill() could still
	// be answered by a thread not yet stopped. Wait until /proc says "T".
	p.mu.Lock()
	pid := 0
	if p.s.cmd != nil {
		pid = p.s.cmd.Process.Pid
	}
	p.mu.Unlock()
	for i := 0; pid != 0 && i < 200 && !allStopped(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
}

// allStopped reports whether every thread of pid is in state T (stopped).
func allStopped(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return true // nothing to wait for
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // thread gone
		}
		// The state follows the parenthesised command name.
		if j := bytes.LastIndexByte(b, ')'); j < 0 || j+2 >= len(b) || b[j+2] != 'T' {
			return false
		}
	}
	return true
}

// Resume undoes Pause (SIGCONT).
func (p *MariaDBProcess) Resume() { p.signal(syscall.SIGCONT) }

func (p *MariaDBProcess) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.s.cmd != nil {
		p.s.cmd.Process.Signal(sig)
	}
}
