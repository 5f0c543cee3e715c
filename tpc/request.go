package tpc

import (
	"iter"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"shoal"
)

// Mode is which way a third-party copy goes, seen from this server.
type Mode uint8

const (
	ModeNone Mode = iota // a plain WebDAV COPY within this namespace
	ModePull             // COPY with Source: this server fetches the file
	ModePush             // COPY with a foreign Destination: this server sends its file
)

func (m Mode) String() string {
	switch m {
	case ModePull:
		return "pull"
	case ModePush:
		return "push"
	}
	return "none"
}

// Header is one request header as the client sent it.
type Header struct{ Name, Value string }

// Headers are a request's headers, in order.
type Headers []Header

// Get is the first value of name (case-insensitive) and whether there is one.
func (h Headers) Get(name string) (string, bool) {
	for _, kv := range h {
		if strings.EqualFold(kv.Name, name) {
			return kv.Value, true
		}
	}
	return "", false
}

// Request is what a third-party COPY asks for, from its headers.
type Request struct {
	Mode Mode
	// Remote is the other endpoint's file: the source of a pull, the
	// destination of a push (http or https; dav and davs mapped).
	Remote *url.URL
	// Transfer are the TransferHeader<Name>: v headers as <Name>: v, sent
	// on every outbound request (Authorization carries the other side's
	// token: never logged).
	Transfer []Header
	// Streams is X-Number-Of-Streams (0 when absent): a pull may fetch
	// that many ranges at once.
	Streams int
	// Verify is RequireChecksumVerification (default true): the copy
	// fails unless the other side's adler32 or md5 matches.
	Verify bool
	// Overwrite is the Overwrite header (default T): with F an existing
	// target fails the copy before anything starts.
	Overwrite bool
}

// Limits of what Parse accepts.
const (
	MaxStreams         = 100
	maxTransferHeaders = 64
	maxRemoteURL       = 8192
	transferPrefix     = "transferheader"
)

// notPassed are the headers a TransferHeader may not set: they frame
// the outbound request or are the copy's own.
var notPassed = map[string]bool{
	"host": true, "content-length": true, "transfer-encoding": true, "connection": true,
	"keep-alive": true, "proxy-connection": true, "upgrade": true, "te": true, "trailer": true,
	"expect": true, "range": true, "content-range": true,
}

// Parse reads a COPY's headers. It returns nil (and no error) for a plain
// WebDAV COPY: no Source, and a Destination that is a path or names this
// server (local reports that; nil: nothing is local). Source wins over
// Destination. Malformed or unsupported headers are KindInvalid (400),
// with a reason a client can act on.
func Parse(h Headers, local func(*url.URL) bool) (*Request, error) {
	const op = "COPY"
	r := &Request{Verify: true, Overwrite: true}
	if src, ok := h.Get("Source"); ok && strings.TrimSpace(src) != "" {
		u, err := ParseRemote(src, "Source")
		if err != nil {
			return nil, err
		}
		r.Mode, r.Remote = ModePull, u
	} else if dst, ok := h.Get("Destination"); ok {
		dst = strings.TrimSpace(dst)
		if dst == "" || dst[0] == '/' || !strings.Contains(dst, "://") {
			return nil, nil // a path, or malformed: the local COPY answers it
		}
		u, err := ParseRemote(dst, "Destination")
		if err != nil {
			if sameHostAnyScheme(dst, local) {
				return nil, nil // ours, under a scheme the local COPY ignores
			}
			return nil, err
		}
		if local != nil && local(u) {
			return nil, nil
		}
		r.Mode, r.Remote = ModePush, u
	} else {
		return nil, nil
	}
	switch v, _ := h.Get("Credential"); strings.ToLower(strings.TrimSpace(v)) {
	case "", "none":
	case "gridsite", "oidc":
		return nil, shoal.Errorf(op, shoal.KindInvalid, "Credential: %s asks for delegation, which this server does not do: send Credential: none and the other side's token in TransferHeaderAuthorization", strings.ToLower(strings.TrimSpace(v)))
	default:
		return nil, shoal.Errorf(op, shoal.KindInvalid, "Credential: want none (or no Credential header)")
	}
	if v, ok := h.Get("X-Number-Of-Streams"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > MaxStreams {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "X-Number-Of-Streams: want a number from 0 to %d", MaxStreams)
		}
		r.Streams = n
	}
	if v, ok := h.Get("RequireChecksumVerification"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
		case "false":
			r.Verify = false
		default:
			return nil, shoal.Errorf(op, shoal.KindInvalid, "RequireChecksumVerification: want true or false")
		}
	}
	if v, ok := h.Get("Overwrite"); ok {
		switch strings.TrimSpace(v) {
		case "T", "t":
		case "F", "f":
			r.Overwrite = false
		default:
			return nil, shoal.Errorf(op, shoal.KindInvalid, "Overwrite must be T or F")
		}
	}
	for _, kv := range h {
		if len(kv.Name) <= len(transferPrefix) || !strings.EqualFold(kv.Name[:len(transferPrefix)], transferPrefix) {
			continue
		}
		name := kv.Name[len(transferPrefix):]
		if !validToken(name) {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "a TransferHeader names no valid header")
		}
		if notPassed[strings.ToLower(name)] {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "%s: this header cannot be passed on", kv.Name)
		}
		if !validValue(kv.Value) {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "%s: the value holds a control character", kv.Name)
		}
		if len(r.Transfer) == maxTransferHeaders {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "more than %d TransferHeader headers", maxTransferHeaders)
		}
		r.Transfer = append(r.Transfer, Header{Name: name, Value: strings.TrimSpace(kv.Value)})
	}
	return r, nil
}

// ParseRemote parses the URL of the other endpoint: absolute http, https,
// dav (http) or davs (https), with a host, without credentials (they
// belong in TransferHeaderAuthorization, not in a URL that may be
// logged) and without a fragment. what names the header in errors.
func ParseRemote(raw, what string) (*url.URL, error) {
	const op = "COPY"
	raw = strings.TrimSpace(raw)
	if len(raw) > maxRemoteURL {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "%s: URL longer than %d bytes", what, maxRemoteURL)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Host == "" {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "%s: want an absolute http, https, dav or davs URL", what)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "dav":
		u.Scheme = "http"
	case "https", "davs":
		u.Scheme = "https"
	default:
		return nil, shoal.Errorf(op, shoal.KindInvalid, "%s: want an http, https, dav or davs URL", what)
	}
	if u.User != nil {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "%s: credentials in the URL are not accepted; send them in TransferHeaderAuthorization", what)
	}
	if u.Hostname() == "" {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "%s: the URL names no host", what)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "%s: bad port", what)
		}
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path, u.RawPath = "/", ""
	}
	return u, nil
}

// sameHostAnyScheme reports whether a Destination that is no http URL
// (say ftp://this-host/x) still names this server, so the local COPY
// keeps answering it as it always did.
func sameHostAnyScheme(dst string, local func(*url.URL) bool) bool {
	if local == nil {
		return false
	}
	u, err := url.Parse(dst)
	if err != nil || u.Host == "" {
		return false
	}
	u.Scheme = "http"
	return local(u)
}

// Redact is u as a log or a failure line may show it: scheme, host, port
// and path, never the query (a pre-signed URL's signature), user info or
// fragment.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// validToken reports whether s is an HTTP header name (RFC 9110 token).
func validToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validValue reports whether s may be sent as a header value: no
// control character but tab.
func validValue(s string) bool {
	if len(s) > 16<<10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// HeadersOf copies a fasthttp request's headers for Parse. fasthttp
// hands names over normalized (TransferHeaderHost becomes
// Transferheaderhost), so a TransferHeader's name is taken as the client
// spelled it from the raw headers, when the request was read from a
// connection: its errors then quote what the client sent.
func HeadersOf(h interface {
	All() iter.Seq2[[]byte, []byte]
}) Headers {
	var out Headers
	var raw []string
	for k, v := range h.All() {
		name := string(k)
		if len(name) > len(transferPrefix) && strings.EqualFold(name[:len(transferPrefix)], transferPrefix) {
			if raw == nil {
				raw = rawNames(h)
			}
			if i := slices.IndexFunc(raw, func(r string) bool { return strings.EqualFold(r, name) }); i >= 0 {
				name = raw[i]
				raw[i] = "" // a repeated header takes the next spelling
			}
		}
		out = append(out, Header{Name: name, Value: string(v)})
	}
	return out
}

// rawNames are the header names of h as received, in order (none when h
// was not read from a connection).
func rawNames(h any) []string {
	names := []string{}
	rh, ok := h.(interface{ RawHeaders() []byte })
	if !ok {
		return names
	}
	for line := range strings.Lines(string(rh.RawHeaders())) {
		if name, _, ok := strings.Cut(line, ":"); ok {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}

// ParseRedirected reads the COPY md redirected to a data server or gw:
// it must be a third-party copy (nothing there is local).
func ParseRedirected(h Headers, op string) (*Request, error) {
	req, err := Parse(h, nil)
	if err == nil && req == nil {
		err = shoal.Errorf(op, shoal.KindInvalid, "a COPY here needs a Source or Destination URL")
	}
	return req, err
}
