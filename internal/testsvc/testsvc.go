// Package testsvc starts real services (mariadbd, and memcached in its own
// file) for tests, on 127.0.0.1 only.
//
// A service is started once per test binary and shared by its tests; each
// test gets its own namespace in it (a fresh database for MariaDB). The
// processes are stopped when the test binary ends: call testsvc.Main from
// the package's TestMain,
//
//	func TestMain(m *testing.M) { testsvc.Main(m) }
//
// and, as a safety net for packages that forget (or a binary killed hard),
// every child process is started with Pdeathsig so the kernel kills it
// when the test binary exits.
//
// A missing tool is t.Fatal when CI=true and t.Skip otherwise.
package testsvc

import (
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true), where missing tools
// are failures, not skips.
func InCI() bool { return os.Getenv("CI") == "true" }

// NeedTool returns the path of an executable, or ends the test: t.Fatal
// in CI, t.Skip elsewhere. dirs are searched after $PATH (daemons live in
// /usr/sbin, which is not always on a test's PATH).
func NeedTool(t testing.TB, name string, dirs ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range append(dirs, "/usr/sbin", "/usr/local/sbin", "/sbin") {
		p := d + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	Missing(t, "%s not found (install it, e.g. apt-get install the package that ships it)", name)
	return ""
}

// Missing ends a test that cannot get a service: Fatal in CI, Skip otherwise.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// childAttr makes the kernel kill a started service when the test binary
// dies, and puts it in its own process group.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

var (
	stopMu   sync.Mutex
	stoppers []func()
)

// atExit registers fn to run when Main returns from the tests.
func atExit(fn func()) {
	stopMu.Lock()
	defer stopMu.Unlock()
	stoppers = append(stoppers, fn)
}

// StopAll stops every service started so far (Main calls it).
func StopAll() {
	stopMu.Lock()
	fns := stoppers
	stoppers = nil
	stopMu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// Main runs the tests, then stops the services they started, and exits.
func Main(m *testing.M) {
	code := m.Run()
	StopAll()
	os.Exit(code)
}
