package testsvc

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

// MariaDB user the tests connect as over TCP (created at start; the
// server does not run with --skip-grant-tables).
const (
	mariaUser = "shoal"
	mariaPass = "shoal-test"
)

type mariaServer struct {
	daemon string // path of mariadbd
	port   int
	dir    string
	cmd    *exec.Cmd
	done   chan error // receives the exit status once
	err    error      // why it could not start; reported to every test
	skip   bool       // err is a missing tool, not a failure
}

var (
	mariaOnce sync.Once
	maria     *mariaServer
)

// MariaDB returns a DSN ("mysql://USER:PASS@127.0.0.1:PORT/DB") of a fresh,
// empty database on a mariadbd started once for this test binary, and
// drops the database when t ends. Without mariadbd: t.Fatal under CI=true,
// else t.Skip.
func MariaDB(t testing.TB) string {
	t.Helper()
	mariaOnce.Do(func() { maria = startMariaDB() })
	if maria.err != nil {
		if maria.skip {
			Missing(t, "mariadb: %v", maria.err)
		}
		t.Fatalf("mariadb: %v", maria.err)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	name := "t_" + hex.EncodeToString(rnd[:])
	admin, err := maria.open("")
	if err != nil {
		t.Fatalf("mariadb: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("mariadb: create database: %v", err)
	}
	t.Cleanup(func() {
		if admin, err := maria.open(""); err == nil {
			admin.Exec("DROP DATABASE IF EXISTS " + name)
			admin.Close()
		}
	})
	return fmt.Sprintf("mysql://%s:%s@127.0.0.1:%d/%s", mariaUser, mariaPass, maria.port, name)
}

func (s *mariaServer) open(db string) (*sql.DB, error) {
	return sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(127.0.0.1:%d)/%s", mariaUser, mariaPass, s.port, db))
}

func findTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/bin"} {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode()&0o111 != 0 {
			return filepath.Join(d, name), nil
		}
	}
	return "", fmt.Errorf("%s not found (apt-get install mariadb-server)", name)
}

func startMariaDB() *mariaServer {
	s := &mariaServer{}
	if s.err, s.skip = s.install(); s.err != nil {
		return s
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if s.port, err = FreePort(); err != nil {
			s.err = err
			return s
		}
		if err = s.launch(); err == nil {
			atExit(s.stop)
			return s
		}
	}
	s.err = err
	os.RemoveAll(s.dir)
	return s
}

// install finds the tools and creates a fresh datadir; skip says the
// error is a missing tool.
func (s *mariaServer) install() (err error, skip bool) {
	if s.daemon, err = findTool("mariadbd"); err != nil {
		return err, true
	}
	install, err := findTool("mariadb-install-db")
	if err != nil {
		return err, true
	}
	if s.dir, err = os.MkdirTemp("", "shoal-mariadb-"); err != nil {
		return err, false
	}
	// Its own temporary directory, for the install and the server: with
	// MariaDB's default (/tmp) an install beside other test binaries
	// failed once, a temporary table's file in /tmp gone under it.
	if err := os.Mkdir(filepath.Join(s.dir, "tmp"), 0o700); err != nil {
		os.RemoveAll(s.dir)
		return err, false
	}
	out, err := exec.Command(install, "--no-defaults", "--auth-root-authentication-method=normal",
		"--datadir="+filepath.Join(s.dir, "data"), "--tmpdir="+filepath.Join(s.dir, "tmp"), "--user=root", "--skip-test-db").CombinedOutput()
	if err != nil {
		os.RemoveAll(s.dir)
		return fmt.Errorf("mariadb-install-db: %v\n%s", err, out), false
	}
	return nil, false
}

// launch starts mariadbd on s.port over s.dir and waits until it
// answers; on failure the process is gone and the error log's tail is in
// the error.
func (s *mariaServer) launch() error {
	sock := filepath.Join(s.dir, "mariadb.sock")
	s.cmd = exec.Command(s.daemon, "--no-defaults", "--user=root",
		"--datadir="+filepath.Join(s.dir, "data"), "--tmpdir="+filepath.Join(s.dir, "tmp"), "--socket="+sock, "--pid-file="+filepath.Join(s.dir, "mariadb.pid"),
		"--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", s.port),
		"--log-error="+filepath.Join(s.dir, "error.log"),
		"--skip-name-resolve", "--skip-log-bin",
		"--innodb-buffer-pool-size=64M", "--innodb-log-file-size=16M",
		"--innodb-flush-log-at-trx-commit=1", // honest durability, as in production
		"--max-connections=500")
	s.cmd.SysProcAttr = childAttr()
	if err := s.cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	cmd := s.cmd
	go func() { exited <- cmd.Wait() }()
	s.done = exited
	if err := s.setup(sock, exited); err != nil {
		s.cmd.Process.Kill()
		<-exited
		s.cmd = nil
		log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
		return fmt.Errorf("mariadbd did not start: %v\n%s", err, tail(string(log), 2000))
	}
	return nil
}

// setup waits for the server's socket, then creates the test user with
// root over the socket (root has no password and no TCP access).
func (s *mariaServer) setup(sock string, exited chan error) error {
	root, err := sql.Open("mysql", "root@unix("+sock+")/")
	if err != nil {
		return err
	}
	defer root.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("mariadbd exited: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = root.PingContext(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mariadbd not ready after 60s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, q := range []string{
		fmt.Sprintf("CREATE USER IF NOT EXISTS '%s'@'127.0.0.1' IDENTIFIED BY '%s'", mariaUser, mariaPass),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'127.0.0.1'", mariaUser),
	} {
		if _, err := root.Exec(q); err != nil {
			return fmt.Errorf("%s: %v", q, err)
		}
	}
	return nil
}

func (s *mariaServer) stop() {
	s.halt()
	os.RemoveAll(s.dir)
}

// halt stops mariadbd cleanly (SIGTERM; SIGKILL after 30 s) and keeps
// its datadir.
func (s *mariaServer) halt() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGTERM) // mariadbd shuts down cleanly on TERM
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	s.cmd = nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
