package wire

// Request ids: md takes a client's X-Request-Id (or makes one), echoes it,
// logs it, and passes it to the data server or gw it sends the client to
// (ParamRequestID), which logs it too.

// HeaderRequestID is the request id header md accepts and echoes.
const HeaderRequestID = "X-Request-Id"

// MaxRequestID bounds a request id taken from a client.
const MaxRequestID = 64

// AppendRequestID appends the part of a client's request id shoal keeps:
// at most MaxRequestID bytes, surrounding blanks dropped, and every byte
// other than a letter, a digit or one of - _ . : / + = @ replaced by '_',
// so an id can neither forge nor break a log line. Empty: none usable.
func AppendRequestID(dst, h []byte) []byte {
	for len(h) > 0 && (h[0] == ' ' || h[0] == '\t') {
		h = h[1:]
	}
	for len(h) > 0 && (h[len(h)-1] == ' ' || h[len(h)-1] == '\t') {
		h = h[:len(h)-1]
	}
	if len(h) > MaxRequestID {
		h = h[:MaxRequestID]
	}
	for _, c := range h {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '/', c == '+', c == '=', c == '@':
		default:
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}
