package shoal

import (
	"strings"
	"unicode/utf8"
)

// Limits on user paths (POSIX NAME_MAX and PATH_MAX).
const (
	MaxNameLen = 255
	MaxPathLen = 4096
)

// CleanPath turns the raw, still percent-encoded path of a request URI into
// a clean absolute path: "/" or "/a/b" with no trailing slash. It reports
// whether the raw path ended in a slash (a client naming a collection).
//
// It rejects, with KindInvalid, what could escape the namespace or confuse a
// filesystem: "." and ".." segments (also when percent-encoded), NUL and
// other control bytes, malformed escapes, and names that are not valid
// UTF-8 or hold a control character or a Unicode noncharacter (see
// CheckName: such a name would make every listing of its directory
// ill-formed XML); with KindTooLarge a name over MaxNameLen bytes, and with
// KindURITooLong a path over MaxPathLen bytes. Repeated slashes collapse.
func CleanPath(raw string) (clean string, trailingSlash bool, err error) {
	const op = "path"
	if raw == "" || raw[0] != '/' {
		return "", false, Errorf(op, KindInvalid, "path must be absolute")
	}
	if len(raw) > 3*MaxPathLen {
		return "", false, Errorf(op, KindURITooLong, "path longer than %d bytes", MaxPathLen)
	}
	if !needsCleaning(raw) {
		if len(raw) > MaxPathLen {
			return "", false, Errorf(op, KindURITooLong, "path longer than %d bytes", MaxPathLen)
		}
		return raw, false, nil
	}
	var b strings.Builder
	b.Grow(len(raw))
	trailingSlash = len(raw) > 1 && raw[len(raw)-1] == '/'
	for _, seg := range strings.Split(raw[1:], "/") {
		if seg == "" {
			continue
		}
		name, err := unescape(seg)
		if err != nil {
			return "", false, err
		}
		if name == "." || name == ".." {
			return "", false, Errorf(op, KindInvalid, "path segment %q not allowed", name)
		}
		if len(name) > MaxNameLen {
			return "", false, Errorf(op, KindTooLarge, "name longer than %d bytes", MaxNameLen)
		}
		if strings.IndexByte(name, '/') >= 0 {
			return "", false, Errorf(op, KindInvalid, "encoded '/' in a name")
		}
		if err := CheckName(name); err != nil {
			return "", false, err
		}
		b.WriteByte('/')
		b.WriteString(name)
		if b.Len() > MaxPathLen {
			return "", false, Errorf(op, KindURITooLong, "path longer than %d bytes", MaxPathLen)
		}
	}
	if b.Len() == 0 {
		return "/", trailingSlash, nil
	}
	return b.String(), trailingSlash, nil
}

// needsCleaning reports whether raw differs from its clean form or needs
// checks beyond a scan: escapes, dot segments, empty segments, a trailing
// slash, control bytes, long names.
func needsCleaning(raw string) bool {
	if raw == "/" {
		return false
	}
	if raw[len(raw)-1] == '/' {
		return true
	}
	segStart := 1
	for i := 1; i <= len(raw); i++ {
		if i == len(raw) || raw[i] == '/' {
			seg := raw[segStart:i]
			if seg == "" || seg == "." || seg == ".." || len(seg) > MaxNameLen {
				return true
			}
			segStart = i + 1
			continue
		}
		if c := raw[i]; c == '%' || c < 0x20 || c >= 0x7f {
			return true // escapes, controls and non-ASCII are checked by the slow path
		}
	}
	return false
}

// CheckName reports, with KindInvalid, a name that is not valid UTF-8 (an
// overlong form such as %c0%ae included), or that holds a control
// character (C0, DEL, C1) or a Unicode noncharacter (U+FDD0–U+FDEF and the
// last two code points of every plane, U+FFFE and U+FFFF among them, which
// XML 1.0 does not allow in a document).
func CheckName(name string) error {
	const op = "path"
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return Errorf(op, KindInvalid, "control character in a name")
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return Errorf(op, KindInvalid, "name is not valid UTF-8")
		case r <= 0x9f:
			return Errorf(op, KindInvalid, "control character in a name")
		case isNoncharacter(r):
			return Errorf(op, KindInvalid, "Unicode noncharacter U+%04X in a name", r)
		}
		i += size
	}
	return nil
}

func isNoncharacter(r rune) bool {
	return r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe
}

func unescape(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		return s, nil
	}
	buf := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			buf = append(buf, s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", Errorf("path", KindInvalid, "malformed percent-escape")
		}
		buf = append(buf, unhex(s[i+1])<<4|unhex(s[i+2]))
		i += 2
	}
	return string(buf), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// ParentPath returns the parent of a clean path ("/" for "/" and "/a").
func ParentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// JoinPath joins a clean directory path and a name.
func JoinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// IsWithin reports whether p is root or lies below it (both clean).
func IsWithin(p, root string) bool {
	if root == "/" || p == root {
		return true
	}
	return strings.HasPrefix(p, root) && len(p) > len(root) && p[len(root)] == '/'
}

// EscapePath percent-encodes a clean path for use in a URL or an href,
// keeping '/' and the unreserved characters.
func EscapePath(p string) string {
	const hexd = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(p); i++ {
		if !pathSafe(p[i]) {
			n++
		}
	}
	if n == 0 {
		return p
	}
	buf := make([]byte, 0, len(p)+2*n)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if pathSafe(c) {
			buf = append(buf, c)
		} else {
			buf = append(buf, '%', hexd[c>>4], hexd[c&15])
		}
	}
	return string(buf)
}

func pathSafe(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '/' || c == '-' || c == '_' || c == '.' || c == '~'
}
