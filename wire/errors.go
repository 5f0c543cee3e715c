package wire

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"

	"shoal"
)

// HeaderKind names the kind of an error answer (shoal.Kind.String, e.g.
// "not found"). Every error answer of md, the data servers and the gws
// carries it, so a client rebuilds the *shoal.Error with that kind instead
// of guessing it from the status, which several kinds share.
const HeaderKind = "X-Shoal-Kind"

// ErrorKind is the kind of an error answer: the one HeaderKind names, or,
// for an answer without it (from a proxy, say), the one KindForStatus
// guesses.
func ErrorKind(status int, header func(string) string) shoal.Kind {
	if k, ok := shoal.ParseKind(header(HeaderKind)); ok {
		return k
	}
	return KindForStatus(status)
}

// KindForStatus guesses the kind of an answer that does not say it: the
// first kind whose status it is (KindOther for a 500), else
// KindUnavailable for a 5xx and KindInvalid for anything else. A bare 502
// is a proxy's (shoal's own 502, a MOVE to another server, says its
// kind): unavailable, to retry.
func KindForStatus(status int) shoal.Kind {
	for k := shoal.KindOther; ; k++ {
		if _, ok := shoal.ParseKind(k.String()); !ok {
			break
		}
		if k.Status() == status && k != shoal.KindBadGateway {
			return k
		}
	}
	if status >= 500 {
		return shoal.KindUnavailable
	}
	return shoal.KindInvalid
}

// ResponseError rebuilds the error of an answer with status ≥ 300: the
// kind ErrorKind reads, and as cause the server's reason (its text/plain
// body, shoal.Reason of its error, whose leading kind name is dropped
// since the error adds it back). Relayed with the one error writer, it
// gives the client the same status, kind and body.
func ResponseError(op, path string, status int, header func(string) string, body []byte) error {
	kind := ErrorKind(status, header)
	reason := strings.TrimSpace(string(body))
	if r, ok := XMLErrorReason(body); ok {
		reason = r
	}
	if reason == "" {
		reason = strconv.Itoa(status)
	}
	e := &shoal.Error{Op: op, Path: path, Kind: kind}
	if reason != kind.String() {
		e.Err = Reason(strings.TrimPrefix(reason, kind.String()+": "))
	}
	return e
}

// Reason is the reason text of an error answer, as an error.
type Reason string

func (r Reason) Error() string { return string(r) }

// NamespaceShoal is the XML namespace of shoal's own elements (WebDAV
// properties, the reason inside an error body).
const NamespaceShoal = "http://shoal.dev/ns"

// InsufficientStorageBody is the body of a 507 answer (RFC 4331 §6): a
// DAV:error naming the precondition that failed — DAV:quota-not-exceeded
// when a quota refused the write (KindQuota), DAV:sufficient-disk-space
// otherwise — and the reason as <s:reason>.
func InsufficientStorageBody(kind shoal.Kind, reason string) []byte {
	cond := "sufficient-disk-space"
	if kind == shoal.KindQuota {
		cond = "quota-not-exceeded"
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n" + `<D:error xmlns:D="DAV:" xmlns:s="` + NamespaceShoal + `"><D:`)
	b.WriteString(cond)
	b.WriteString(`/><s:reason>`)
	xml.EscapeText(&b, []byte(reason))
	b.WriteString("</s:reason></D:error>\n")
	return b.Bytes()
}

// XMLErrorReason reads the reason out of an error body that
// InsufficientStorageBody wrote; ok is false for any other body.
func XMLErrorReason(body []byte) (reason string, ok bool) {
	if !bytes.HasPrefix(body, []byte("<?xml")) || len(body) > 64<<10 {
		return "", false
	}
	var e struct {
		XMLName xml.Name `xml:"DAV: error"`
		Reason  *string  `xml:"http://shoal.dev/ns reason"`
	}
	if err := xml.Unmarshal(body, &e); err != nil || e.Reason == nil {
		return "", false
	}
	return strings.TrimSpace(*e.Reason), true
}
