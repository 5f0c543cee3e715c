package dav

// Method is m as a constant string when it is a method md knows (HTTP's,
// WebDAV class 2's, and POST), else "": a switch on it costs no
// allocation, where string(m) kept would.
func Method(m []byte) string {
	switch string(m) { // the compiler does not allocate for a switch on string(bytes)
	case "HEAD":
		return "HEAD"
	case "GET":
		return "GET"
	case "PROPFIND":
		return "PROPFIND"
	case "PUT":
		return "PUT"
	case "OPTIONS":
		return "OPTIONS"
	case "MKCOL":
		return "MKCOL"
	case "DELETE":
		return "DELETE"
	case "MOVE":
		return "MOVE"
	case "COPY":
		return "COPY"
	case "PROPPATCH":
		return "PROPPATCH"
	case "LOCK":
		return "LOCK"
	case "UNLOCK":
		return "UNLOCK"
	case "POST":
		return "POST"
	}
	return ""
}
