package catalog

import (
	"crypto/sha256"
	"strings"
)

// pathHash is the unique key of a path: InnoDB cannot index a 4096-byte
// column whole, so paths are unique through 16 bytes of their SHA-256.
func pathHash(p string) []byte {
	sum := sha256.Sum256([]byte(p))
	return sum[:16]
}

// subtreeRange returns the bounds of the paths strictly below dir for a
// range scan: lo <= path < hi ('0' is the byte after '/').
func subtreeRange(dir string) (lo, hi string) {
	base := strings.TrimSuffix(dir, "/")
	return base + "/", base + "0"
}

// ancestors returns the proper ancestors of a clean path, nearest last,
// root excluded ("/a/b/c" → "/a", "/a/b").
func ancestors(p string) []string {
	var out []string
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}
