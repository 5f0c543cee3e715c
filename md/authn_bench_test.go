package md

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"shoal/auth"
	"shoal/auth/rules"
	"shoal/auth/token"
	"shoal/auth/users"
	"shoal/internal/logline"
	"shoal/internal/testissuer"
)

// The stat hot path with identity and logs, beside BenchmarkHEAD and
// BenchmarkPROPFINDDepth0 (no Auth, no logs):
//
//	go test -run '^$' -bench 'HEAD|PROPFIND' -benchmem ./md/

// benchAuth is an Auth with a test issuer and a user "bench" who may do
// anything under /data, and the header of each credential.
func benchAuth(b *testing.B) (a *auth.Auth, bearer, basic string) {
	is := testissuer.New(b)
	v, err := token.New(token.Config{Issuers: []token.IssuerConfig{{URL: is.URL}}, Audiences: []string{testAudience}, RootCAs: is.Pool()})
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "users")
	if _, err := users.Add(file, "bench", "bench-pw", nil, 4); err != nil {
		b.Fatal(err)
	}
	us, err := users.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	rs, err := rules.Compile([]rules.Rule{{Path: "/data", Who: "user:bench", Rights: []string{"read", "create", "modify"}}})
	if err != nil {
		b.Fatal(err)
	}
	c := is.WLCG("bench", testAudience, "storage.read:/data storage.modify:/data")
	c["wlcg.groups"] = []string{"/cms", "/cms/uscms"}
	return auth.New(auth.Config{Tokens: v, Users: us, Rules: rs}), "Bearer " + is.Mint(b, c), basicAuth("bench", "bench-pw")
}

func withAuth(a *auth.Auth) func(*Options) { return func(o *Options) { o.Auth = a } }

// withAccessLog logs every request as the binary does (logline's text
// lines), to io.Discard: the cost of making the line, not of the disk.
func withAccessLog(o *Options) {
	log := slog.New(logline.NewHandler(io.Discard, false, slog.LevelInfo))
	o.AccessLog, o.AuditLog = log, log
}

func BenchmarkHEADBearer(b *testing.B) {
	a, bearer, _ := benchAuth(b)
	benchRun(b, benchServer(b, withAuth(a)), "HEAD", map[string]string{"Authorization": bearer})
}

func BenchmarkHEADBasic(b *testing.B) {
	a, _, basic := benchAuth(b)
	benchRun(b, benchServer(b, withAuth(a)), "HEAD", map[string]string{"Authorization": basic})
}

func BenchmarkHEADAccessLog(b *testing.B) {
	benchRun(b, benchServer(b, withAccessLog), "HEAD", nil)
}

func BenchmarkHEADBearerAccessLog(b *testing.B) {
	a, bearer, _ := benchAuth(b)
	benchRun(b, benchServer(b, withAuth(a), withAccessLog), "HEAD", map[string]string{"Authorization": bearer})
}

func BenchmarkPROPFINDDepth0Bearer(b *testing.B) {
	a, bearer, _ := benchAuth(b)
	benchRun(b, benchServer(b, withAuth(a)), "PROPFIND", map[string]string{"Depth": "0", "Authorization": bearer})
}

func BenchmarkPROPFINDDepth0BearerAccessLog(b *testing.B) {
	a, bearer, _ := benchAuth(b)
	benchRun(b, benchServer(b, withAuth(a), withAccessLog), "PROPFIND", map[string]string{"Depth": "0", "Authorization": bearer})
}
