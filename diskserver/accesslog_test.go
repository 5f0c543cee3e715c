package diskserver

import (
	"bufio"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"shoal/internal/testlog"
	"shoal/sign"
	"shoal/wire"
)

type lockedBuffer = testlog.Buffer

// TestLogsNoCredentials: davix and gfal2 resend the client's
// Authorization header (and curl its cookies) to the data server md
// redirects them to. The data server logs each object request with the
// principal md signed into the URL, and never a header or the signature:
// not on success, not on a refused signature, not when fasthttp itself
// cannot parse the request.
func TestLogsNoCredentials(t *testing.T) {
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ts := startServer(t, Options{Logger: log, AccessLog: log})
	const secret = "SECRETtoken123"
	hdr := map[string]string{"Authorization": "Bearer " + secret, "Cookie": "session=" + secret + "cookie"}
	exp := time.Now().Add(time.Minute)
	put := ts.Keys.URLAs(ts.URL, "PUT", "0b1", "", "token:alice@https://iam.example", exp) + "&" + wire.ParamRequestID + "=req-42"
	if st, _, body := do(t, "PUT", put, []byte("data"), hdr); st != 201 {
		t.Fatalf("PUT = %d %s", st, body)
	}
	get := ts.Keys.URLAs(ts.URL, "GET", "0b1", "", "user:bob", exp)
	if st, _, _ := do(t, "GET", get, nil, hdr); st != 200 {
		t.Fatalf("GET = %d", st)
	}
	// Another principal's name on a URL signed for bob: refused, and
	// not believed.
	forged := strings.Replace(get, "who=user%3Abob", "who=user%3Aeve", 1)
	if st, _, _ := do(t, "GET", forged, nil, hdr); st != 403 {
		t.Fatalf("forged principal: %d", st)
	}
	// The principal cannot be dropped either.
	u, _ := url.Parse(get)
	q := u.Query()
	q.Del(sign.ParamPrincipal)
	u.RawQuery = q.Encode()
	if st, _, _ := do(t, "GET", u.String(), nil, hdr); st != 403 {
		t.Fatalf("principal dropped: %d", st)
	}
	// A request fasthttp refuses itself (a header line without a colon).
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("GET /obj/0b1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + secret + "\r\nbroken header " + secret + "\r\n\r\n"))
	bufio.NewReader(c).ReadString('\n')
	c.Close()
	time.Sleep(100 * time.Millisecond)

	out := logs.String()
	sig := q.Get(sign.ParamSig)
	for _, leak := range []string{secret, sig, "Bearer", "session="} {
		if strings.Contains(out, leak) {
			t.Errorf("the log holds %q:\n%s", leak, out)
		}
	}
	for _, want := range []string{`principal=token:alice@https://iam.example method=PUT object=0b1 status=201 bytes=4`, "id=req-42", `principal=user:bob method=GET object=0b1 status=200`, `principal=- method=GET object=0b1 status=403`} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}
