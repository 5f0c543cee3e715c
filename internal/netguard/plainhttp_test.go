package netguard

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/internal/testhttp"
	"shoal/tlsconf"
)

// TestPlainHTTPToTLSPort: plain HTTP sent to a TLS port gets one 400 that
// says to use https (it got a closed connection, "Empty reply from
// server"); bytes that are neither TLS nor HTTP get nothing; a TLS
// client is served as before.
func TestPlainHTTPToTLSPort(t *testing.T) {
	ca, err := tlsconf.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	tln, turl := testhttp.ListenTLS(t, ca)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") }}
	go srv.Serve(Listen(tln, Limits{}))
	defer srv.Shutdown()
	addr := strings.TrimPrefix(turl, "https://")

	res, err := http.Get("http://" + addr + "/f")
	if err != nil {
		t.Fatalf("plain GET to the TLS port: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || !strings.Contains(string(body), "serves https") {
		t.Errorf("plain GET to the TLS port: %d %q", res.StatusCode, body)
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("\x00\x01garbage that is no request\r\n\r\n"))
	if b, _ := io.ReadAll(bufio.NewReader(c)); len(b) != 0 {
		t.Errorf("bytes neither TLS nor HTTP got an answer: %q", b)
	}
	c.Close()

	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	res, err = cl.Get(turl + "/f")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "ok" {
		t.Errorf("GET over TLS: %d %q", res.StatusCode, body)
	}
}
