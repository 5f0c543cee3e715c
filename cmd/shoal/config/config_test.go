package config

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite ../../../shoal.example.yaml from Defaults")

const examplePath = "../../../shoal.example.yaml"

// flags is the flag set of a command using a few keys, parsed from args.
func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.String("config", "", "")
	Flag(fs, "listen", "md.listen", "")
	Flag(fs, "data-mode", "md.data_mode", "")
	Flag(fs, "memcached", "cache.memcached", "")
	Flag(fs, "inline-max", "md.inline_max", "")
	Flag(fs, "url-ttl", "md.url_ttl", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "shoal.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExampleIsDefaults(t *testing.T) {
	d := Defaults()
	var buf bytes.Buffer
	if err := WriteSample(&buf, &d); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(examplePath, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, buf.Bytes()) {
		t.Fatalf("shoal.example.yaml differs from `shoal config defaults`; run: go test ./cmd/shoal/config -run TestExampleIsDefaults -update")
	}
	got, err := Load(flags(t, "--config", examplePath))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("loading shoal.example.yaml:\n got %+v\nwant %+v", got, d)
	}
}

func TestNoSourcesIsDefaults(t *testing.T) {
	got, err := Load(flags(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := Defaults(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestEveryKeyDocumented(t *testing.T) {
	d := Defaults()
	seen := map[string]bool{}
	for _, l := range allLeaves(&d) {
		if l.doc == "" || strings.Contains(l.key, "..") || strings.HasSuffix(l.key, ".") {
			t.Errorf("key %q: missing doc or mapstructure tag", l.key)
		}
		if seen[l.key] {
			t.Errorf("key %q twice", l.key)
		}
		seen[l.key] = true
	}
	if len(seen) < 20 {
		t.Errorf("only %d keys found", len(seen))
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("SHOAL_MD_DATA_MODE", "proxy")
	t.Setenv("SHOAL_CACHE_MEMCACHED", "127.0.0.1:11211,127.0.0.1:11212")
	t.Setenv("SHOAL_MD_URL_TTL", "2m")
	t.Setenv("SHOAL_MD_INLINE_MAX", "8KiB")
	t.Setenv("SHOAL_DISK_ID", "d7") // a key with no flag in this command
	t.Setenv("SHOAL_CATALOG_MAX_OPEN_CONNS", "3")
	c, err := Load(flags(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.MD.DataMode != "proxy" {
		t.Errorf("md.data_mode = %q, want proxy", c.MD.DataMode)
	}
	if want := []string{"127.0.0.1:11211", "127.0.0.1:11212"}; !reflect.DeepEqual(c.Cache.Memcached, want) {
		t.Errorf("cache.memcached = %q, want %q", c.Cache.Memcached, want)
	}
	if c.MD.URLTTL != 2*time.Minute {
		t.Errorf("md.url_ttl = %v, want 2m", c.MD.URLTTL)
	}
	if c.MD.InlineMax != 8*KiB {
		t.Errorf("md.inline_max = %v, want 8KiB", c.MD.InlineMax)
	}
	if c.Disk.ID != "d7" {
		t.Errorf("disk.id = %q, want d7", c.Disk.ID)
	}
	if c.Catalog.MaxOpenConns != 3 {
		t.Errorf("catalog.max_open_conns = %d, want 3", c.Catalog.MaxOpenConns)
	}
}

func TestPrecedence(t *testing.T) {
	file := writeFile(t, "md:\n  listen: 127.0.0.1:9001\n  data_mode: redirect\n  url_ttl: 90s\ncache:\n  memcached: [\"h:1\"]\n")
	t.Setenv("SHOAL_MD_DATA_MODE", "proxy")
	t.Setenv("SHOAL_MD_URL_TTL", "3m")

	c, err := Load(flags(t, "--config", file))
	if err != nil {
		t.Fatal(err)
	}
	if c.MD.Listen != "127.0.0.1:9001" {
		t.Errorf("file: md.listen = %q", c.MD.Listen)
	}
	if c.MD.DataMode != "proxy" || c.MD.URLTTL != 3*time.Minute {
		t.Errorf("env over file: md.data_mode = %q, md.url_ttl = %v", c.MD.DataMode, c.MD.URLTTL)
	}
	if !reflect.DeepEqual(c.Cache.Memcached, []string{"h:1"}) {
		t.Errorf("file list: cache.memcached = %q", c.Cache.Memcached)
	}

	c, err = Load(flags(t, "--config", file, "--data-mode", "auto", "--listen", "127.0.0.1:9002", "--memcached", "a:1,b:2", "--url-ttl", "7s", "--inline-max", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if c.MD.DataMode != "auto" || c.MD.Listen != "127.0.0.1:9002" || c.MD.URLTTL != 7*time.Second || c.MD.InlineMax != 0 {
		t.Errorf("flags over env and file: %+v", c.MD)
	}
	if !reflect.DeepEqual(c.Cache.Memcached, []string{"a:1", "b:2"}) {
		t.Errorf("flag list: cache.memcached = %q", c.Cache.Memcached)
	}
}

func TestConfigFileFromEnvironment(t *testing.T) {
	t.Setenv("SHOAL_CONFIG", writeFile(t, "log:\n  level: debug\n"))
	c, err := Load(flags(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Log.Level != "debug" {
		t.Errorf("log.level = %q, want debug from $SHOAL_CONFIG", c.Log.Level)
	}
}

func TestRejects(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		env        [2]string
		wantInErr  string
	}{
		{"unknown key", "md:\n  listn: x\n", [2]string{}, "listn"},
		{"unknown section", "mdd:\n  listen: x\n", [2]string{}, "mdd"},
		{"bad data mode", "md:\n  data_mode: sideways\n", [2]string{}, "md.data_mode"},
		{"bad duration", "md:\n  url_ttl: soon\n", [2]string{}, "url_ttl"},
		{"negative duration", "cache:\n  timeout: -1s\n", [2]string{}, "cache.timeout"},
		{"bad size", "md:\n  inline_max: 4 lots\n", [2]string{}, "inline_max"},
		{"inline too big", "md:\n  inline_max: 2MiB\n", [2]string{}, "md.inline_max"},
		{"bad listen", "md:\n  listen: nowhere\n", [2]string{}, "md.listen"},
		{"bad dsn", "catalog:\n  dsn: postgres://x\n", [2]string{}, "catalog.dsn"},
		{"bad memcached", "cache:\n  memcached: [\"nohost\"]\n", [2]string{}, "cache.memcached"},
		{"bad md url", "disk:\n  md: ftp://x\n", [2]string{}, "disk.md"},
		{"pack too big", "disk:\n  pack_max: 1MiB\n", [2]string{}, "disk.pack_max"},
		{"negative pack", "", [2]string{"SHOAL_DISK_PACK_MAX", "-1"}, "disk.pack_max"},
		{"bad log level", "", [2]string{"SHOAL_LOG_LEVEL", "loud"}, "log.level"},
		{"bad env int", "", [2]string{"SHOAL_CATALOG_MAX_OPEN_CONNS", "many"}, "max_open_conns"},
		{"negative pool", "catalog:\n  max_open_conns: -1\n", [2]string{}, "catalog.max_open_conns"},
		{"not yaml", "md: [\n", [2]string{}, "config file"},
		{"certificate without key", "tls:\n  md_cert_file: /c.pem\n", [2]string{}, "tls.md_key_file"},
		{"key without certificate", "", [2]string{"SHOAL_TLS_DISK_KEY_FILE", "/k.pem"}, "tls.disk_cert_file"},
		{"tls 1.1", "tls:\n  min_version: \"1.1\"\n", [2]string{}, "tls.min_version"},
		{"negative tls watch", "tls:\n  watch: -5s\n", [2]string{}, "tls.watch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env[0] != "" {
				t.Setenv(tc.env[0], tc.env[1])
			}
			args := []string{}
			if tc.file != "" {
				args = append(args, "--config", writeFile(t, tc.file))
			}
			_, err := Load(flags(t, args...))
			if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
				t.Errorf("err = %v, want one naming %q", err, tc.wantInErr)
			}
		})
	}
}

func TestSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Size
		out  string
	}{
		{"0", 0, "0"},
		{"4096", 4 * KiB, "4KiB"},
		{"4KiB", 4 * KiB, "4KiB"},
		{"4k", 4 * KiB, "4KiB"},
		{"1 MiB", MiB, "1MiB"},
		{"3GB", 3 * GiB, "3GiB"},
		{"2TiB", 2 * TiB, "2TiB"},
		{"1000", 1000, "1000"},
		{"1536", 1536, "1536"},
	} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if s := got.String(); s != tc.out {
			t.Errorf("Size(%d).String() = %q, want %q", got, s, tc.out)
		}
	}
	for _, bad := range []string{"", "KiB", "-1", "1.5MiB", "12XB", "99999999999TiB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
}

func TestAuthSection(t *testing.T) {
	file := writeFile(t, `auth:
  issuers:
    - url: https://iam.example.org/
      audiences: [https://se.example.org]
    - {url: https://scitokens.example.org, jwks_file: /etc/shoal/sci.jwks, base_path: /sci}
  audiences: ["https://md.example.org"]
  users_file: /etc/shoal/users
  rules:
    - {path: /pub, who: anonymous, rights: [read]}
    - path: /home/alice
      who: "user:alice"
      rights: "read,create,modify"
`)
	t.Setenv("SHOAL_AUTH_KEY_REFRESH", "2h")
	c, err := Load(flags(t, "--config", file))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Auth
	if len(a.Issuers) != 2 || a.Issuers[0].URL != "https://iam.example.org/" || !reflect.DeepEqual(a.Issuers[0].Audiences, []string{"https://se.example.org"}) ||
		a.Issuers[1].JWKSFile != "/etc/shoal/sci.jwks" || a.Issuers[1].BasePath != "/sci" || a.Issuers[1].Audiences != nil {
		t.Errorf("issuers: %+v", a.Issuers)
	}
	if len(a.Rules) != 2 || a.Rules[0].Who != "anonymous" || !reflect.DeepEqual(a.Rules[1].Rights, []string{"read", "create", "modify"}) {
		t.Errorf("rules: %+v", a.Rules)
	}
	if a.UsersFile != "/etc/shoal/users" || a.KeyRefresh != 2*time.Hour || !reflect.DeepEqual(a.Audiences, []string{"https://md.example.org"}) {
		t.Errorf("auth: %+v", a)
	}
	// The scalar keys come from the environment too.
	t.Setenv("SHOAL_AUTH_USERS_FILE", "/srv/users")
	if c, err = Load(flags(t, "--config", file)); err != nil || c.Auth.UsersFile != "/srv/users" {
		t.Errorf("SHOAL_AUTH_USERS_FILE: %q %v", c.Auth.UsersFile, err)
	}
	// config show writes what loads back the same.
	var buf bytes.Buffer
	if err := WriteSample(&buf, &c); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHOAL_AUTH_USERS_FILE", "")
	t.Setenv("SHOAL_AUTH_KEY_REFRESH", "")
	again, err := Load(flags(t, "--config", writeFile(t, buf.String())))
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(again.Auth, c.Auth) {
		t.Errorf("round trip:\n got %+v\nwant %+v", again.Auth, c.Auth)
	}
}

func TestAuthRejects(t *testing.T) {
	for _, tc := range []struct{ name, file, wantInErr string }{
		{"bad who", "auth:\n  rules: [{path: /, who: \"usr:bob\", rights: [read]}]\n", "auth.rules[0]"},
		{"bad right", "auth:\n  rules: [{path: /, who: anonymous, rights: [write]}]\n", "auth.rules[0]"},
		{"relative rule path", "auth:\n  rules: [{path: x, who: anonymous, rights: [read]}]\n", "auth.rules[0]"},
		{"unknown rule key", "auth:\n  rules: [{path: /, who: anonymous, rights: [read], when: now}]\n", "when"},
		{"plain http issuer", "auth:\n  issuers: [{url: \"http://iam.example.org\"}]\n", "auth.issuers[0].url"},
		{"issuer twice", "auth:\n  issuers: [{url: \"https://a.example\"}, {url: \"https://a.example\"}]\n", "auth.issuers[1].url"},
		{"key refresh too short", "auth:\n  key_refresh: 30m\n", "auth.key_refresh"},
		{"key refresh too long", "auth:\n  key_refresh: 7h\n", "auth.key_refresh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(flags(t, "--config", writeFile(t, tc.file)))
			if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
				t.Errorf("err = %v, want one naming %q", err, tc.wantInErr)
			}
		})
	}
}
