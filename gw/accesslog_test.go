package gw

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"shoal/internal/testhttp"
	"shoal/internal/testlog"
	"shoal/wire"
)

type syncBuf = testlog.Buffer

// TestLogsPrincipalNotCredentials: the gw logs each object request with
// the principal md signed into its URL and md's request id, never the
// Authorization header clients resend, nor the signature.
func TestLogsPrincipalNotCredentials(t *testing.T) {
	c := startCluster(t, 6)
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ln, gwURL := testhttp.Listen(t)
	srv, err := NewServer(ServerOptions{ID: "gw0", PublicURL: gwURL, Keys: c.Keys, Servers: c.URLs(), Logger: log, AccessLog: log})
	if err != nil {
		t.Fatal(err)
	}
	testhttp.Serve(t, srv, ln)
	const secret = "SECRETbearer987"
	hdr := map[string]string{"Authorization": "Bearer " + secret}
	u := func(method, who string) string {
		return wire.GatewayURLAs(c.Keys, gwURL, method, idFor(1), "", who, ec42, c.IDs(), time.Now().Add(time.Minute)) + "&" + wire.ParamRequestID + "=gw-req-9"
	}
	if st, _, body := httpDo(t, "PUT", u("PUT", "user:alice"), bytes.NewReader([]byte("shards")), hdr); st != 201 {
		t.Fatalf("PUT: %d %s", st, body)
	}
	if st, _, _ := httpDo(t, "GET", u("GET", "token:x@https://iam.example"), nil, hdr); st != 200 {
		t.Fatalf("GET: %d", st)
	}
	forged := strings.Replace(u("GET", "user:alice"), "who=user%3Aalice", "who=user%3Aroot", 1)
	if st, _, _ := httpDo(t, "GET", forged, nil, hdr); st != 403 {
		t.Fatalf("forged principal: %d", st)
	}
	out := logs.String()
	for _, want := range []string{"id=gw-req-9 principal=user:alice method=PUT", "principal=token:x@https://iam.example method=GET", "principal=- method=GET"} {
		if !strings.Contains(out, want) {
			t.Errorf("the gw log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) || strings.Contains(out, "sig=") {
		t.Errorf("the gw log holds a credential:\n%s", out)
	}
}
