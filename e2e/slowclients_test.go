package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSlowAndIdleClients: on every listener of `shoal all` (md, its
// internal API, the data server) and of `shoal gw`, a client sending its
// headers a byte at a time is cut after net.read_header_timeout, an idle
// keep-alive connection after net.idle_timeout; and md's connection cap
// answers the surplus 503 + Retry-After without harming the uploads in
// flight. The finding: such sockets stayed open indefinitely on data
// servers and gws, for minutes on md, and nothing capped them.
func TestSlowAndIdleClients(t *testing.T) {
	env := []string{"SHOAL_NET_READ_HEADER_TIMEOUT=400ms", "SHOAL_NET_IDLE_TIMEOUT=400ms",
		"SHOAL_NET_MAX_CONNS_PER_IP=4"}
	n := startShoal(t, "", env...)
	var m []string
	for deadline := time.Now().Add(5 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m = regexp.MustCompile(`md_internal=(http://\S+)`).FindStringSubmatch(n.stderr.String())
	}
	if m == nil {
		t.Fatalf("no md_internal URL in the log:\n%s", n.stderr)
	}
	// The gw reports to md's internal port, so that md's public port sees
	// only this test's connections under its cap of 4 per address.
	g := startProc(t, env, "gw", "--listen", "127.0.0.1:0", "--md", m[1], "--secret-file", n.Data+"/secret")
	listeners := map[string]string{"md": n.URL, "md-internal": m[1], "disk": n.DiskURL, "gw": g.fields["gw"]}
	for name, u := range listeners {
		addr := strings.TrimPrefix(u, "http://")
		if cut, after := slowloris(t, addr); !cut || after > 3*time.Second {
			t.Errorf("%s: a client sending a header byte every 100 ms: cut %v after %v (read_header_timeout 400ms)", name, cut, after)
		}
		if !idleCut(t, addr) {
			t.Errorf("%s: an idle keep-alive connection was not closed within 3 s (idle_timeout 400ms)", name)
		}
	}

	// md: four uploads in flight from this address fill the cap; a fifth
	// connection is told 503; the four then finish.
	var conns []net.Conn
	for i := range 4 {
		c, err := net.Dial("tcp", strings.TrimPrefix(n.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Small enough to be kept inline: md alone serves them (a proxied
		// upload would also open a connection to the data server, which
		// on loopback is this same address under the same cap).
		fmt.Fprintf(c, "PUT /inflight%d HTTP/1.1\r\nHost: x\r\nContent-Length: 4000\r\n\r\n", i)
		c.Write(make([]byte, 3000))
		conns = append(conns, c)
	}
	time.Sleep(200 * time.Millisecond)
	// A raw connection: md answers a connection beyond the cap as soon as
	// it is accepted, and Go's client drops a response that comes before
	// its request is written ("unsolicited response on idle channel").
	surplus, err := net.Dial("tcp", strings.TrimPrefix(n.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer surplus.Close()
	surplus.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(surplus, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(surplus), nil)
	if err != nil {
		t.Fatalf("the surplus connection got no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("surplus connection: %d %q, Retry-After %q", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	for i, c := range conns {
		c.Write(make([]byte, 1000))
		r, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || r.StatusCode != 201 {
			t.Errorf("upload %d in flight at the cap: %v %v", i, r, err)
		}
	}
}

// slowloris sends a request's headers a byte every 100 ms and reports
// whether, and after how long, the server closed the connection.
func slowloris(t *testing.T, addr string) (bool, time.Duration) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	closed := make(chan struct{})
	go func() {
		c.SetReadDeadline(time.Now().Add(6 * time.Second))
		io.Copy(io.Discard, c)
		close(closed)
	}()
	line := "GET /x HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 60)
	for i := 0; i < len(line); i++ {
		select {
		case <-closed:
			return time.Since(start) < 6*time.Second, time.Since(start)
		case <-time.After(100 * time.Millisecond):
		}
		if _, err := c.Write([]byte{line[i]}); err != nil {
			return true, time.Since(start)
		}
	}
	<-closed
	return time.Since(start) < 6*time.Second, time.Since(start)
}

// idleCut makes one request on a keep-alive connection and reports whether
// the server closes it within 3 s of the answer.
func idleCut(t *testing.T, addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /.shoal/healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	r, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s: %v", addr, err)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err = br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}
