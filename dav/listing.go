package dav

import "shoal"

// AppendTruncated appends the <D:response> that ends a listing cut short
// after its status was sent: the collection's href with 507 Insufficient
// Storage, which RFC 4918 (9.1) gives a server to say that the results
// were truncated, and the reason (the error's kind and message).
func AppendTruncated(b []byte, dir string, err error) []byte {
	b = append(b, "<D:response>"...)
	b = appendHref(b, dir, true)
	b = append(b, "<D:status>"...)
	b = append(b, statusLine(507)...)
	b = append(b, "</D:status><D:responsedescription>listing cut short: "...)
	b = appendEscaped(b, shoal.KindOf(err).String()+": "+err.Error(), false)
	return append(b, "</D:responsedescription></D:response>"...)
}
