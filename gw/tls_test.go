package gw

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"shoal"
	"shoal/diskserver"
	"shoal/internal/testhttp"
	"shoal/sign"
	"shoal/storetest"
	"shoal/tlsconf"
	"shoal/wire"
)

// TestGatewayTLS: a gw serving https over three data servers serving
// https writes and reads ec:2+1 files (shard writes through remote's
// fasthttp client, reads through the streaming span client), verifying
// the data servers against its ClientTLS; a gw whose ClientTLS trusts
// another CA reaches no shard.
func TestGatewayTLS(t *testing.T) {
	ca, err := tlsconf.NewCA("cluster CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := tlsconf.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	keys := sign.Random()
	servers := map[string]string{}
	var ids []string
	for i := range 3 {
		ln, url := testhttp.ListenTLS(t, ca)
		id := fmt.Sprintf("tls%d", i)
		ds, err := diskserver.New(diskserver.Options{ID: id, Dirs: []string{t.TempDir()}, Keys: keys, PublicURL: url, ReserveBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		testhttp.Serve(t, ds, ln)
		servers[id] = url
		ids = append(ids, id)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	do := func(t *testing.T, method, url string, body []byte) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, url, bytes.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	layout := shoal.Layout{Kind: shoal.LayoutEC, K: 2, M: 1}
	for _, tc := range []struct {
		name  string
		trust *tlsconf.CA
		ok    bool
	}{{"cluster CA", ca, true}, {"another CA", other, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ln, gwURL := testhttp.ListenTLS(t, ca)
			g, err := NewServer(ServerOptions{ID: "gw-tls", PublicURL: gwURL, Keys: keys, StripeSize: 16 << 10, Servers: servers,
				ClientTLS: &tls.Config{RootCAs: tc.trust.Pool(), MinVersion: tls.VersionTLS12}})
			if err != nil {
				t.Fatal(err)
			}
			testhttp.Serve(t, g, ln)
			want := storetest.Data(7, 2<<20+3)
			url := func(method string) string {
				return wire.GatewayURL(keys, gwURL, method, "0f0f", "", layout, ids, time.Now().Add(time.Minute))
			}
			if !tc.ok {
				// A small body: the gw answers before reading it, and
				// a big one would still be on its way when it hangs up.
				want = want[:1024]
			}
			st, body := do(t, "PUT", url("PUT"), want)
			if !tc.ok {
				if st < 500 {
					t.Fatalf("PUT with data servers of an untrusted CA: %d %s", st, body)
				}
				return
			}
			if st != 201 {
				t.Fatalf("PUT: %d %s", st, body)
			}
			if st, got := do(t, "GET", url("GET"), nil); st != 200 || !bytes.Equal(got, want) {
				t.Fatalf("GET: %d, %d bytes, equal %v", st, len(got), bytes.Equal(got, want))
			}
		})
	}
}
