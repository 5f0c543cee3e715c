package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"shoal/cache"
	"shoal/cache/memcache"
	"shoal/catalog"
	"shoal/cmd/shoal/config"
	"shoal/diskserver"
	"shoal/ec"
	"shoal/gw"
	"shoal/md"
	"shoal/sign"
	"shoal/tlsconf"
)

// execute runs the command tree with args and returns stdout and the error.
func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestCommandTree(t *testing.T) {
	root := newRootCommand()
	for _, path := range [][]string{{"all"}, {"md"}, {"disk"}, {"admin", "fsck"}, {"admin", "servers"}, {"version"}, {"config", "defaults"}, {"config", "show"}, {"bench"}} {
		cmd, _, err := root.Find(path)
		if err != nil || cmd.Name() != path[len(path)-1] {
			t.Errorf("command %q missing: %v", path, err)
		}
	}
	// Every flag bound to a key names a real key (Flag panics otherwise)
	// and says which key and variable it sets.
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if keys := f.Annotations["shoal-config-key"]; len(keys) == 1 && !strings.Contains(f.Usage, config.EnvName(keys[0])) {
				t.Errorf("%s --%s: usage does not name $%s", c.CommandPath(), f.Name, config.EnvName(keys[0]))
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// TestDefaultsMatchPackages keeps the documented defaults equal to the
// ones the packages fall back to, so shoal.example.yaml tells the truth.
func TestDefaultsMatchPackages(t *testing.T) {
	d := config.Defaults()
	for _, tc := range []struct {
		key       string
		got, want any
	}{
		{"md.inline_max", int64(d.MD.InlineMax), int64(md.DefaultInlineMax)},
		{"md.url_ttl", d.MD.URLTTL, md.DefaultURLTTL},
		{"md.server_ttl", d.MD.ServerTTL, md.DefaultServerTTL},
		{"md.no_redirect_agents", d.MD.NoRedirectAgents, md.DefaultNoRedirectAgents},
		{"md.data_mode", d.MD.DataMode, md.DataAuto},
		// Zero: catalog picks per dialect (DefaultMaxOpenConns for MySQL,
		// SQLiteReaders for SQLite) and as many idle as open.
		{"catalog.max_open_conns", d.Catalog.MaxOpenConns, 0},
		{"catalog.max_idle_conns", d.Catalog.MaxIdleConns, 0},
		{"catalog.conn_max_lifetime", d.Catalog.ConnMaxLifetime, catalog.DefaultConnMaxLifetime},
		{"catalog.busy_timeout", d.Catalog.BusyTimeout, catalog.DefaultBusyTimeout},
		{"catalog.call_timeout", d.Catalog.CallTimeout, catalog.DefaultCallTimeout},
		{"catalog.write_batches", d.Catalog.WriteBatches, catalog.DefaultWriteBatches},
		{"cache.l1_entries", d.Cache.L1Entries, cache.DefaultL1Size},
		{"cache.l1_ttl", d.Cache.L1TTL, cache.DefaultL1TTL},
		{"cache.ttl", d.Cache.TTL, cache.DefaultL2TTL},
		{"cache.negative_ttl", d.Cache.NegativeTTL, cache.DefaultNegativeTTL},
		{"cache.key_prefix", d.Cache.KeyPrefix, cache.DefaultKeyPrefix},
		{"cache.timeout", d.Cache.Timeout, memcache.DefaultTimeout},
		{"disk.pool", d.Disk.Pool, diskserver.DefaultPool},
		{"disk.heartbeat", d.Disk.Heartbeat, diskserver.DefaultHeartbeatInterval},
		{"disk.garbage_interval", d.Disk.Garbage, diskserver.DefaultGarbageInterval},
		{"disk.reserve", int64(d.Disk.Reserve), int64(diskserver.DefaultReserveBytes)},
		{"md.chunked_reserve", int64(d.MD.ChunkedReserve), int64(md.DefaultChunkedReserve)},
		{"gw.heartbeat", d.GW.Heartbeat, gw.DefaultHeartbeatInterval},
		{"gw.stripe_size", int(d.GW.StripeSize), ec.DefaultStripeSize},
		{"tls.watch", d.TLS.Watch, tlsconf.DefaultWatchInterval},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: config default %v, package default %v", tc.key, tc.got, tc.want)
		}
	}
}

func TestConfigDefaultsCommand(t *testing.T) {
	out, err := execute(t, "config", "defaults")
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../../shoal.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(committed) {
		t.Errorf("`shoal config defaults` differs from shoal.example.yaml")
	}
}

func TestConfigShowAppliesEnvironment(t *testing.T) {
	t.Setenv("SHOAL_MD_DATA_MODE", "proxy")
	out, err := execute(t, "config", "show", "--log-level", "warn")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `data_mode: "proxy"`) || !strings.Contains(out, `level: "warn"`) {
		t.Errorf("config show does not reflect env and flag:\n%s", out)
	}
}

func TestVersion(t *testing.T) {
	out, err := execute(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shoal " + version, "commit " + commit, runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH} {
		if !strings.Contains(out, want) {
			t.Errorf("version output %q lacks %q", out, want)
		}
	}
}

func TestRejectsBadConfigBeforeStarting(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"all", "--data", dir, "--data-mode", "sideways"}, "md.data_mode"},
		{[]string{"all"}, "--data"},
		{[]string{"md", "--listen", "127.0.0.1:0"}, "--catalog"},
		{[]string{"md", "--listen", "127.0.0.1:0", "--catalog", "sqlite:" + filepath.Join(dir, "c.db")}, "secret"},
		{[]string{"disk", "--md", "http://127.0.0.1:1"}, "--data"},
		{[]string{"all", "--data", dir, "--listen", "nowhere"}, "md.listen"},
		{[]string{"all", "--data", dir, "--listen", "127.0.0.1:65535"}, "set disk.listen"},
		{[]string{"disk", "--md", "http://127.0.0.1:1", "--data", dir, "--pool", "bad name"}, "disk.pool"},
		{[]string{"disk", "--md", "http://127.0.0.1:1", "--data", dir, "--pool", "gw"}, "reserved"},
		{[]string{"admin", "--md", "http://127.0.0.1:1", "pool", "add", "a/b", "replica:1"}, "pool name"},
		{[]string{"admin", "--md", "http://127.0.0.1:1", "jobs", "--limit", "-3"}, "--limit -3"},
		{[]string{"admin", "--md", "http://127.0.0.1:1", "jobs", "--limit", "0"}, "--limit 0"},
		{[]string{"admin", "--md", "http://127.0.0.1:1", "stauts"}, `unknown command "stauts" for "shoal admin"`},
		{[]string{"admin", "job", "shwo", "1"}, `unknown command "shwo" for "shoal admin job"`},
		{[]string{"config", "shwo"}, `unknown command "shwo" for "shoal config"`},
		{[]string{"bench", "stt"}, `unknown command "stt" for "shoal bench"`},
	} {
		_, err := execute(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("shoal %q: err = %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}

// TestJobCommandsCannotRunExit2: every admin job command exits 2 when it
// could not run (md down, no secret, bad arguments), never 1, which says
// the job ran and data is not right. Wrong secrets and failed jobs: e2e
// TestAdminJobExitCodes.
func TestJobCommandsCannotRunExit2(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := ensureSecret(secret); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port nobody answers on once closed
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	jobs := [][]string{{"fsck"}, {"repair"}, {"scrub", "--rate", "0"}, {"drain", "s1"}, {"job", "follow", "1"}}
	want2 := func(what string, args ...string) {
		t.Helper()
		_, err := execute(t, args...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != jobNotRun {
			t.Errorf("%s: err = %v, want exit code %d", what, err, jobNotRun)
		}
	}
	for _, job := range jobs {
		want2(job[0]+" against nothing", append([]string{"admin", "--md", "http://" + addr, "--secret-file", secret}, job...)...)
		want2(job[0]+" without a secret", append([]string{"admin", "--md", "http://" + addr}, job...)...)
	}
	md := []string{"admin", "--md", "http://" + addr, "--secret-file", secret}
	want2("drain without a server", append(md, "drain")...)
	want2("scrub with a bad rate", append(md, "scrub", "--rate", "fast")...)
	want2("repair with an argument", append(md, "repair", "everything")...)
	want2("job follow of a bad id", append(md, "job", "follow", "x")...)
	want2("fsck with an unknown flag", append(md, "fsck", "--deep")...)
}

func TestEnsureSecret(t *testing.T) {
	p := filepath.Join(t.TempDir(), "secret")
	if err := ensureSecret(p); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(p)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("secret mode %v, want 0600", st.Mode().Perm())
	}
	if err := ensureSecret(p); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(p)
	if !bytes.Equal(first, second) {
		t.Errorf("ensureSecret replaced an existing secret")
	}
	keys, err := sign.Load(p)
	if err != nil {
		t.Fatalf("generated secret does not load: %v", err)
	}
	kid, sig := keys.Sign("GET", "abc", time.Now().Add(time.Minute).Unix(), "")
	if kid == "" || sig == "" {
		t.Errorf("generated secret does not sign")
	}
}

func TestNextPort(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080": "127.0.0.1:8081",
		"127.0.0.1:0":    "127.0.0.1:0",
		":9000":          ":9001",
		"[::1]:80":       "[::1]:81",
	} {
		if got, err := nextPort(in); err != nil || got != want {
			t.Errorf("nextPort(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"nohost", "h:65535", "h:x"} {
		if _, err := nextPort(bad); err == nil {
			t.Errorf("nextPort(%q) succeeded", bad)
		}
	}
}

func TestReachableURL(t *testing.T) {
	for _, tc := range []struct {
		addr net.TCPAddr
		want string
	}{
		{net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 80}, "http://10.1.2.3:80"},
		{net.TCPAddr{IP: net.IPv4zero, Port: 8081}, "http://127.0.0.1:8081"},
		{net.TCPAddr{IP: net.IPv6unspecified, Port: 8081}, "http://127.0.0.1:8081"},
		{net.TCPAddr{IP: net.IPv6loopback, Port: 1}, "http://[::1]:1"},
	} {
		if got := reachableURL(&tc.addr); got != tc.want {
			t.Errorf("reachableURL(%v) = %q, want %q", &tc.addr, got, tc.want)
		}
	}
}

// TestDeployConfigsLoad: every example config shipped under deploy/ is
// accepted (no unknown keys, valid values).
func TestDeployConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("../../deploy/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no deploy/*/*.yaml found")
	}
	for _, f := range files {
		if _, err := execute(t, "config", "show", "--config", f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.String("config", f, "")
		c, err := config.Load(fs)
		if err == nil {
			err = c.CheckHeartbeats(true, true) // what shoal disk, gw and all check at start
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestConfigShowHidesPassword(t *testing.T) {
	t.Setenv("SHOAL_CATALOG_DSN", "mysql://shoal:s3cret@db:3306/shoal")
	out, err := execute(t, "config", "show")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "s3cret") || !strings.Contains(out, `dsn: "mysql://shoal:***@db:3306/shoal"`) {
		t.Errorf("config show leaks or mangles the DSN:\n%s", out)
	}
}

// TestHeartbeatWithinServerTTL: a data server or gw heartbeat over a third
// of md.server_ttl is refused at start, naming both keys (the Pi configs
// had them equal, and the only data server looked down before each
// heartbeat), by the commands that heartbeat; raising md.server_ttl makes it
// fine.
func TestHeartbeatWithinServerTTL(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SHOAL_DISK_HEARTBEAT", "10s")
	t.Setenv("SHOAL_GW_HEARTBEAT", "10s")
	for _, args := range [][]string{{"disk", "--md", "http://127.0.0.1:1", "--data", dir}, {"gw", "--md", "http://127.0.0.1:1"}, {"all", "--data", dir}} {
		_, err := execute(t, args...)
		if err == nil || !strings.Contains(err.Error(), ".heartbeat: 10s") || !strings.Contains(err.Error(), "md.server_ttl") {
			t.Errorf("shoal %s with heartbeats of 10s and md.server_ttl 10s: err = %v", args[0], err)
		}
	}
	// md beats for no one: its own md.server_ttl may be short.
	t.Setenv("SHOAL_MD_SERVER_TTL", "3s")
	if _, err := execute(t, "md", "--listen", "127.0.0.1:0", "--catalog", "sqlite:"+filepath.Join(dir, "c.db")); err != nil && strings.Contains(err.Error(), "heartbeat") {
		t.Errorf("shoal md with md.server_ttl 3s: %v", err)
	}
	t.Setenv("SHOAL_MD_SERVER_TTL", "30s")
	out, err := execute(t, "config", "show")
	if err != nil || !strings.Contains(out, `heartbeat: "10s"`) {
		t.Errorf("disk.heartbeat 10s with md.server_ttl 30s: %v\n%s", err, out)
	}
}
