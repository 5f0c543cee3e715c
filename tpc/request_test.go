package tpc

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
)

func hdrs(kv ...string) Headers {
	var h Headers
	for i := 0; i+1 < len(kv); i += 2 {
		h = append(h, Header{kv[i], kv[i+1]})
	}
	return h
}

// local is md at 127.0.0.1:8080 as the tests see it.
func local(u *url.URL) bool {
	return IsLocal(u, "127.0.0.1:8080", ParseEndpoints([]string{"https://se.example.org", "http://md.internal:9000/"}))
}

func TestParse(t *testing.T) {
	type want struct {
		mode   Mode
		remote string
		kind   shoal.Kind // KindOther: no error
		reason string     // in the error
	}
	cases := []struct {
		name string
		h    Headers
		want want
	}{
		{"no source, path destination", hdrs("Destination", "/a/b"), want{mode: ModeNone}},
		{"destination on the request's host", hdrs("Destination", "http://127.0.0.1:8080/a"), want{mode: ModeNone}},
		{"destination on a configured name", hdrs("Destination", "davs://se.example.org/a"), want{mode: ModeNone}},
		{"destination on a configured name, explicit port", hdrs("Destination", "https://SE.example.org.:443/a"), want{mode: ModeNone}},
		{"destination on the same host, another port", hdrs("Destination", "http://127.0.0.1:8081/a"), want{mode: ModePush, remote: "http://127.0.0.1:8081/a"}},
		{"destination on another host", hdrs("Destination", "https://remote.example.org/dir/f"), want{mode: ModePush, remote: "https://remote.example.org/dir/f"}},
		{"davs destination", hdrs("Destination", "davs://remote.example.org:2880/f"), want{mode: ModePush, remote: "https://remote.example.org:2880/f"}},
		{"dav destination", hdrs("Destination", "dav://remote.example.org/f"), want{mode: ModePush, remote: "http://remote.example.org/f"}},
		{"ftp destination elsewhere", hdrs("Destination", "ftp://remote.example.org/f"), want{kind: shoal.KindInvalid, reason: "want an http, https, dav or davs URL"}},
		{"ftp destination here stays local", hdrs("Destination", "ftp://127.0.0.1:8080/f"), want{mode: ModeNone}},
		{"source", hdrs("Source", "https://remote.example.org/f?X-Amz-Signature=abc"), want{mode: ModePull, remote: "https://remote.example.org/f?X-Amz-Signature=abc"}},
		{"source wins", hdrs("Source", "http://a.example.org/f", "Destination", "http://b.example.org/g"), want{mode: ModePull, remote: "http://a.example.org/f"}},
		{"source on this host is still a pull", hdrs("Source", "http://127.0.0.1:8080/f"), want{mode: ModePull, remote: "http://127.0.0.1:8080/f"}},
		{"source without host", hdrs("Source", "http:///f"), want{kind: shoal.KindInvalid}},
		{"relative source", hdrs("Source", "/f"), want{kind: shoal.KindInvalid}},
		{"source with credentials", hdrs("Source", "https://u:p@remote.example.org/f"), want{kind: shoal.KindInvalid, reason: "TransferHeaderAuthorization"}},
		{"source with a bad port", hdrs("Source", "https://remote.example.org:99999/f"), want{kind: shoal.KindInvalid}},
		{"gridsite delegation", hdrs("Source", "https://r.example.org/f", "Credential", "gridsite"), want{kind: shoal.KindInvalid, reason: "delegation"}},
		{"oidc delegation", hdrs("Source", "https://r.example.org/f", "credential", "OIDC"), want{kind: shoal.KindInvalid, reason: "delegation"}},
		{"credential none", hdrs("Source", "https://r.example.org/f", "Credential", "none"), want{mode: ModePull, remote: "https://r.example.org/f"}},
		{"credential unknown", hdrs("Source", "https://r.example.org/f", "Credential", "x509"), want{kind: shoal.KindInvalid}},
		{"streams 100", hdrs("Source", "https://r.example.org/f", "X-Number-Of-Streams", "100"), want{mode: ModePull, remote: "https://r.example.org/f"}},
		{"streams 101", hdrs("Source", "https://r.example.org/f", "X-Number-Of-Streams", "101"), want{kind: shoal.KindInvalid, reason: "0 to 100"}},
		{"streams -1", hdrs("Source", "https://r.example.org/f", "X-Number-Of-Streams", "-1"), want{kind: shoal.KindInvalid}},
		{"streams x", hdrs("Source", "https://r.example.org/f", "X-Number-Of-Streams", "x"), want{kind: shoal.KindInvalid}},
		{"verification maybe", hdrs("Source", "https://r.example.org/f", "RequireChecksumVerification", "maybe"), want{kind: shoal.KindInvalid, reason: "true or false"}},
		{"overwrite X", hdrs("Destination", "https://r.example.org/f", "Overwrite", "X"), want{kind: shoal.KindInvalid}},
		{"transfer Host", hdrs("Source", "https://r.example.org/f", "TransferHeaderHost", "evil"), want{kind: shoal.KindInvalid, reason: "cannot be passed on"}},
		{"transfer Content-Length", hdrs("Source", "https://r.example.org/f", "transferheadercontent-length", "1"), want{kind: shoal.KindInvalid, reason: "cannot be passed on"}},
		{"transfer bad name", hdrs("Source", "https://r.example.org/f", "TransferHeader(x)", "1"), want{kind: shoal.KindInvalid}},
		{"transfer control character", hdrs("Source", "https://r.example.org/f", "TransferHeaderX-A", "a\x01b"), want{kind: shoal.KindInvalid}},
		{"accepted and ignored", hdrs("Source", "https://r.example.org/f", "X-No-Delegate", "true", "Secure-Redirection", "1", "SciTag", "65", "ClientInfo", "job-id=1", "TE", "trailers"), want{mode: ModePull, remote: "https://r.example.org/f"}},
	}
	for _, c := range cases {
		r, err := Parse(c.h, local)
		if c.want.kind != shoal.KindOther {
			if !shoal.IsKind(err, c.want.kind) || !strings.Contains(shoal.Reason(err), c.want.reason) {
				t.Errorf("%s: %v, want %v naming %q", c.name, err, c.want.kind, c.want.reason)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if c.want.mode == ModeNone {
			if r != nil {
				t.Errorf("%s: %v %v, want a local COPY", c.name, r.Mode, r.Remote)
			}
			continue
		}
		if r == nil || r.Mode != c.want.mode || r.Remote.String() != c.want.remote {
			t.Errorf("%s: %+v, want %v %s", c.name, r, c.want.mode, c.want.remote)
		}
	}
}

// TestParseKeepsSpelling: a TransferHeader refused by a real fasthttp
// server is quoted as the client spelled it, not as fasthttp normalized
// it (it was "TransferHeaderhost"); a repeated header keeps each spelling.
func TestParseKeepsSpelling(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		r, err := Parse(HeadersOf(&ctx.Request.Header), nil)
		if err != nil {
			ctx.SetBodyString(shoal.Reason(err))
			return
		}
		for _, h := range r.Transfer {
			fmt.Fprintf(ctx, "%s=%s;", h.Name, h.Value)
		}
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	for _, tc := range []struct{ headers, want string }{
		{"TransferHeaderHost: evil\r\n", "invalid: TransferHeaderHost: this header cannot be passed on"},
		{"transferheaderContent-Length: 1\r\n", "invalid: transferheaderContent-Length: this header cannot be passed on"},
		{"TRANSFERHEADERX-A: 1\r\nTransferHeaderx-a: 2\r\n", "X-A=1;x-a=2;"},
	} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "COPY /f HTTP/1.1\r\nHost: 127.0.0.1\r\nSource: https://r.example.org/f\r\n%sConnection: close\r\n\r\n", tc.headers)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if string(body) != tc.want {
			t.Errorf("%q: %q, want %q", tc.headers, body, tc.want)
		}
	}
}

func TestParseOptions(t *testing.T) {
	r, err := Parse(hdrs("Source", "https://r.example.org/f",
		"TransferHeaderAuthorization", "Bearer T0K",
		"transferheaderX-Custom", " v1 ",
		"TransferHeaderX-Custom", "v2",
		"X-Number-Of-Streams", "4",
		"RequireChecksumVerification", "FALSE",
		"Overwrite", "F"), local)
	if err != nil {
		t.Fatal(err)
	}
	want := []Header{{"Authorization", "Bearer T0K"}, {"X-Custom", "v1"}, {"X-Custom", "v2"}}
	if len(r.Transfer) != len(want) {
		t.Fatalf("transfer headers %v, want %v", r.Transfer, want)
	}
	for i := range want {
		if r.Transfer[i] != want[i] {
			t.Errorf("transfer header %d: %v, want %v", i, r.Transfer[i], want[i])
		}
	}
	if r.Streams != 4 || r.Verify || r.Overwrite {
		t.Errorf("streams %d verify %v overwrite %v", r.Streams, r.Verify, r.Overwrite)
	}
	r, _ = Parse(hdrs("Source", "https://r.example.org/f"), local)
	if r.Streams != 0 || !r.Verify || !r.Overwrite {
		t.Errorf("defaults: streams %d verify %v overwrite %v", r.Streams, r.Verify, r.Overwrite)
	}
	if got := Redact(mustURL(t, "https://r.example.org:2880/a%20b?X-Amz-Signature=s#f")); got != "https://r.example.org:2880/a%20b" {
		t.Errorf("Redact: %s", got)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestIsLocal: a Destination is this server when it names the Host the
// request came to (a Host without port: either default port, as behind a
// TLS-terminating proxy) or one of md's own URLs and names.
func TestIsLocal(t *testing.T) {
	own := ParseEndpoints([]string{"https://se.example.org", "md.example.org", "10.0.0.5:8443", "http://[::1]:8080/"})
	cases := []struct {
		u, host string
		want    bool
	}{
		{"http://127.0.0.1:8080/f", "127.0.0.1:8080", true},
		{"https://127.0.0.1:8080/f", "127.0.0.1:8080", true},
		{"http://127.0.0.1:8081/f", "127.0.0.1:8080", false},
		{"https://se.example.org/f", "se.example.org", true},
		{"http://se.example.org/f", "se.example.org", true},
		{"https://se.example.org:2880/f", "se.example.org", false},
		{"https://SE.Example.Org./f", "", true},
		{"https://md.example.org/f", "", true},
		{"http://md.example.org/f", "", true},
		{"http://md.example.org:8080/f", "", false},
		{"https://10.0.0.5:8443/f", "", true},
		{"http://[::1]:8080/f", "", true},
		{"http://[0:0::1]:8080/f", "", true},
		{"https://remote.example.org/f", "se.example.org", false},
		{"https://evil.se.example.org/f", "se.example.org", false},
	}
	for _, c := range cases {
		if got := IsLocal(mustURL(t, c.u), c.host, own); got != c.want {
			t.Errorf("IsLocal(%s, Host %q) = %v, want %v", c.u, c.host, got, c.want)
		}
	}
}

func TestParseDigest(t *testing.T) {
	d, err := ParseDigest("UNIXcksum=1234, ADLER32=0a1b2c3d ,md5=HUXZLQLMuI/KZ5KDcJPcOA==")
	if err != nil || !d.HasAdler32 || d.Adler32 != 0x0a1b2c3d || !d.HasMD5 || len(d.MD5) != 16 {
		t.Fatalf("%+v %v", d, err)
	}
	d, err = ParseDigest("md5=1d45d92d02cc88bfca67928370 93c0e38")
	if err == nil {
		t.Errorf("a malformed md5: %+v", d)
	}
	d, err = ParseDigest("md5=1d45d92d02cc88bfca6792837093c0e3")
	if err != nil || !d.HasMD5 || d.MD5[0] != 0x1d {
		t.Errorf("hex md5: %+v %v", d, err)
	}
	d, err = ParseDigest("adler32=1")
	if err != nil || d.Adler32 != 1 {
		t.Errorf("short adler32: %+v %v", d, err)
	}
	for _, bad := range []string{"adler32=", "adler32=123456789", "adler32=xyz", "md5=!!"} {
		if _, err := ParseDigest(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if d, err := ParseDigest("sha-256=abc, garbage"); err != nil || d.Any() {
		t.Errorf("unknown algorithms: %+v %v", d, err)
	}
	sums := shoal.Sums{Adler32: 1, MD5: make([]byte, 16)}
	if m := (Digest{Adler32: 2, HasAdler32: true}).Mismatch(sums); !strings.Contains(m, "adler32") {
		t.Errorf("adler32 mismatch: %q", m)
	}
	if m := (Digest{Adler32: 1, HasAdler32: true, MD5: make([]byte, 16), HasMD5: true}).Mismatch(sums); m != "" {
		t.Errorf("match: %q", m)
	}
}

// TestMarkerFormat: the blocks and final lines as the issue spells them,
// read back as davix reads them.
func TestMarkerFormat(t *testing.T) {
	now := time.Unix(1700000000, 0)
	b := AppendMarker(nil, now, 123, []string{"tcp:192.0.2.1:443", "tcp:[2001:db8::1]:2880"})
	want := "Perf Marker\nTimestamp: 1700000000\nStripe Index: 0\nStripe Bytes Transferred: 123\nTotal Stripe Count: 1\nRemoteConnections: tcp:192.0.2.1:443,tcp:[2001:db8::1]:2880\nEnd\n"
	if string(b) != want {
		t.Fatalf("marker:\n%s\nwant:\n%s", b, want)
	}
	if got := FailureLine("source GET x answered 404\nNot Found"); got != "failure: source GET x answered 404 Not Found" {
		t.Errorf("failure line %q", got)
	}
	if got := FailureLine(strings.Repeat("x", 2000)); len(got) > 1000 {
		t.Errorf("failure line of %d bytes", len(got))
	}
	stream := string(b) + string(AppendMarker(nil, now.Add(5*time.Second), 456, nil)) + SuccessLine + "\n"
	var seen int
	out, err := ReadStream(strings.NewReader(stream), func(Marker) { seen++ })
	if err != nil || !out.Final || !out.Success || len(out.Markers) != 2 || seen != 2 || out.Markers[1].Bytes != 456 || len(out.Markers[0].Connections) != 2 {
		t.Fatalf("%+v %v", out, err)
	}
	out, err = ReadStream(strings.NewReader(string(b)+"failure: it broke\n"), nil)
	if err != nil || !out.Final || out.Success || out.Failure != "it broke" {
		t.Fatalf("%+v %v", out, err)
	}
	out, _ = ReadStream(strings.NewReader(string(b)), nil)
	if out.Final {
		t.Errorf("a stream without a final line read as final")
	}
	if _, err := ReadStream(strings.NewReader("Perf Marker\nTimestamp:  1\nEnd\n"), nil); err == nil {
		t.Errorf("two spaces after a colon accepted")
	}
}

func TestSums(t *testing.T) {
	s := shoal.Sums{Adler32: 0xab, MD5: []byte{0: 1, 15: 2}}
	got, ok := ParseSums(FormatSums(s))
	if !ok || got.Adler32 != 0xab || got.MD5[0] != 1 || got.MD5[15] != 2 || FormatSums(s)[:8] != "000000ab" {
		t.Errorf("%q → %+v %v", FormatSums(s), got, ok)
	}
	u := mustURL(t, "https://r.example.org/f")
	if SignedMethod(ModePull, u, 5, "") == SignedMethod(ModePush, u, 5, "") || SignedMethod(ModePull, u, 5, "") == SignedMethod(ModePull, mustURL(t, "https://r.example.org/g"), 5, "") {
		t.Error("signed methods of different copies are equal")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("https://r.example.org/f", "", "TransferHeaderAuthorization", "Bearer x", "4", "true", "F")
	f.Add("", "davs://r.example.org:2880/f", "TransferHeaderHost", "h", "101", "maybe", "T")
	f.Add("", "http://127.0.0.1:8080/local", "X", "", "", "", "")
	f.Add("http://[::1]:80/%zz", "ftp://x/", "transferheader", "\x00", "-1", "FALSE", "")
	f.Fuzz(func(t *testing.T, src, dst, name, value, streams, verify, overwrite string) {
		h := hdrs("Source", src, "Destination", dst, name, value, "X-Number-Of-Streams", streams, "RequireChecksumVerification", verify, "Overwrite", overwrite)
		r, err := Parse(h, local)
		if err != nil {
			if !shoal.IsKind(err, shoal.KindInvalid) {
				t.Fatalf("error of kind %v: %v", shoal.KindOf(err), err)
			}
			return
		}
		if r == nil {
			return
		}
		if r.Remote == nil || r.Remote.Host == "" || (r.Remote.Scheme != "http" && r.Remote.Scheme != "https") || r.Remote.User != nil {
			t.Fatalf("remote %v", r.Remote)
		}
		if r.Streams < 0 || r.Streams > MaxStreams {
			t.Fatalf("streams %d", r.Streams)
		}
		for _, th := range r.Transfer {
			if !validToken(th.Name) || !validValue(th.Value) || notPassed[strings.ToLower(th.Name)] {
				t.Fatalf("transfer header %q: %q", th.Name, th.Value)
			}
		}
		if strings.Contains(Redact(r.Remote), "?") {
			t.Fatalf("redacted URL keeps a query: %s", Redact(r.Remote))
		}
	})
}

func FuzzParseDigest(f *testing.F) {
	f.Add("adler32=0a1b2c3d,md5=HUXZLQLMuI/KZ5KDcJPcOA==")
	f.Add("MD5=1d45d92d02cc88bfca6792837093c0e3, UNIXcksum=1")
	f.Add("adler32=,md5")
	f.Fuzz(func(t *testing.T, h string) {
		d, err := ParseDigest(h)
		if err != nil {
			return
		}
		if d.HasMD5 && len(d.MD5) != 16 {
			t.Fatalf("md5 of %d bytes", len(d.MD5))
		}
	})
}

func FuzzReadStream(f *testing.F) {
	f.Add(string(AppendMarker(nil, time.Unix(1, 0), 5, []string{"tcp:1.2.3.4:5"})) + "success: Created\n")
	f.Add("Perf Marker\nTimestamp: x\nEnd\nfailure: no\n")
	f.Add("\tPerf Marker\n\tEnd\naborted\n")
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := ReadStream(strings.NewReader(s), nil)
		if out.Success && out.Failure != "" {
			t.Fatal("both success and failure")
		}
	})
}
