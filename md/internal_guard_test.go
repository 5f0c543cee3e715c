package md

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"shoal/wire"
)

// TestInternalAPIReplayAndBody: the findings "a signed internal call can be
// replayed within its expiry" and "md reads up to 4 MiB of an internal
// POST before checking its signature".
func TestInternalAPIReplayAndBody(t *testing.T) {
	e := newEnv(t, DataProxy)
	body := []byte(`{"id":"ds1","url":"` + e.dsURL + `","free":1,"total":2}`)
	a := wire.SignCall(e.keys, "POST", wire.PathHeartbeat, body, time.Minute)
	send := func() int {
		req, _ := http.NewRequest("POST", e.url+wire.PathHeartbeat, bytes.NewReader(body))
		a.Set(req.Header.Set)
		resp, err := e.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := send(); s != 204 {
		t.Fatalf("a signed heartbeat: %d", s)
	}
	if s := send(); s != 403 {
		t.Errorf("the same heartbeat replayed: %d, want 403", s)
	}

	// Headers that do not verify: 403 at once, the 100 MB body never read.
	c, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\nX-Shoal-Kid: k0\r\nX-Shoal-Exp: %d\r\nX-Shoal-Sig: 00\r\n"+
		"X-Shoal-Nonce: 00000000000000000000000000000000\r\nX-Shoal-Body-Sha256: %s\r\n\r\n",
		wire.PathCommit, time.Now().Add(time.Minute).Unix(), strings.Repeat("0", 64))
	c.Write(make([]byte, 8<<10)) // what fasthttp reads before any handler
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a badly signed call whose body is not sent: %v", err)
	}
	if resp.StatusCode != 403 || !resp.Close {
		t.Errorf("badly signed call: %d, close %v; want 403 and the connection closed", resp.StatusCode, resp.Close)
	}
}
