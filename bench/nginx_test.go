package bench

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const nginxDavModule = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so"

// startNginx runs a real nginx with WebDAV on a free loopback port, with
// its access log on, and returns its URL and the log's path.
func startNginx(t *testing.T) (url, accessLog string) {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err == nil {
		_, err = os.Stat(nginxDavModule)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("nginx with WebDAV needed (apt-get install nginx libnginx-mod-http-dav-ext): %v", err)
		}
		t.Skipf("nginx with WebDAV not installed: %v", err)
	}
	tmp := t.TempDir()
	root := filepath.Join(tmp, "root")
	os.Mkdir(root, 0o755)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tmpl, err := os.ReadFile("nginx-dav.conf")
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // workers may then write into the test's 0700 temp dir
	}
	accessLog = filepath.Join(tmp, "access.log")
	conf := strings.NewReplacer("@USER@", user, "@WORKERS@", "1", "@TMP@", tmp, "@ROOT@", root,
		"@LISTEN@", addr, "@ACCESS_LOG@", accessLog).Replace(string(tmpl))
	confPath := filepath.Join(tmp, "nginx.conf")
	os.WriteFile(confPath, []byte(conf), 0o644)
	cmd := exec.Command(bin, "-p", tmp, "-c", confPath, "-e", filepath.Join(tmp, "error.log"), "-g", "daemon off;")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A worker outlives a master killed outright: TERM lets the master
	// stop its workers; the group kill is for whatever is left.
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			t.Fatalf("nginx did not listen on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr, accessLog
}

// logCounts counts the access log's requests by method and status.
func logCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// combined format: … "METHOD /path HTTP/1.1" STATUS …
		_, rest, ok := strings.Cut(sc.Text(), `"`)
		if !ok {
			continue
		}
		req, rest, _ := strings.Cut(rest, `"`)
		method, _, _ := strings.Cut(req, " ")
		status := strings.Fields(rest)[0]
		out[method+" "+status]++
	}
	return out
}

// TestNginx: against a real nginx WebDAV server, populate, stat (HEAD and
// PROPFIND), list, get and put send exactly what nginx logged.
func TestNginx(t *testing.T) {
	url, accessLog := startNginx(t)
	ctx := context.Background()
	opts := Options{URL: url, Concurrency: 4}
	l := Layout{Prefix: "/tree", Files: 200, Dirs: 10}
	pop, err := Populate(ctx, opts, l, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if pop.OK != 200 {
		t.Fatalf("populate: %+v", pop)
	}
	if st, err := os.Stat(filepath.Join(filepath.Dir(accessLog), "root", "tree", "d0003", "f0000193")); err != nil || st.Size() != 1000 {
		t.Fatalf("populated file on disk: %v", err)
	}
	// nginx logs a request after answering it, so wait for the log to hold
	// exactly the requests sent so far: populate's 200 PUTs and 11 MKCOLs,
	// then each runner's setup and phase requests.
	sent := 211
	settle := func() map[string]int {
		var got map[string]int
		n := 0
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			got = logCounts(t, accessLog)
			n = 0
			for _, v := range got {
				n += v
			}
			if n >= sent {
				break
			}
		}
		if n != sent {
			t.Fatalf("nginx logged %d requests, bench sent %d", n, sent)
		}
		return got
	}
	paths := append(l.FilePaths()[:20], "/tree/missing")
	for _, tc := range []struct {
		spec Spec
		n    uint64
		want map[string]int
	}{
		{Spec{Name: "head", Op: OpStat, Paths: paths}, 210, map[string]int{"HEAD 200": 200, "HEAD 404": 10}},
		{Spec{Name: "propfind", Op: OpStat, Method: "PROPFIND", Paths: paths}, 210, map[string]int{"PROPFIND 207": 200, "PROPFIND 404": 10}},
		{Spec{Name: "list", Op: OpList, Paths: l.DirPaths()}, 30, map[string]int{"PROPFIND 207": 30}},
		{Spec{Name: "get", Op: OpGet, Size: 1000, Paths: paths[:20]}, 100, map[string]int{"GET 200": 100}},
		{Spec{Name: "put", Op: OpPut, Size: 5000, Dir: "/up"}, 64, map[string]int{"PUT 201": 32, "PUT 204": 32}},
	} {
		r := newRunner(t, opts, tc.spec)
		for _, v := range r.SetupRequests() {
			sent += int(v)
		}
		before := settle()
		res := r.Phase(ctx, Limits{Count: tc.n})
		sent += int(res.Requests())
		after := settle()
		got := map[string]int{}
		for k, v := range after {
			if d := v - before[k]; d != 0 {
				got[k] = d
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: nginx logged %v, want %v", tc.spec.Name, got, tc.want)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: nginx logged %v, want %v", tc.spec.Name, got, tc.want)
			}
		}
		if res.Count != tc.n || res.Errors != uint64(got["HEAD 404"]+got["PROPFIND 404"]) {
			t.Errorf("%s: runner %+v, nginx %v", tc.spec.Name, res, got)
		}
	}
}
