package catalog

import (
	"crypto/sha256"
	"strings"
)

// pathHash is the path_hash column's value: InnoDB cannot index a
// 4096-byte column whole, so MySQL finds entries by path through a unique
// index on 16 bytes of the path's SHA-256.
func pathHash(p string) []byte {
	sum := sha256.Sum256([]byte(p))
	return sum[:16]
}

// pathKey is how a dialect finds entries by path: the uniquely indexed
// column and the value a path has in it. SQLite indexes path itself
// (schema version 10): a hash lands every create's index entry on a random
// leaf, one more page for each create of a group commit to write, where
// paths land beside their neighbours' (1.1–1.2× creates at c=16 measured;
// see the README's "What limits each create size"). Both engines keep
// filling path_hash, so that the write statements are one.
type pathKey struct {
	col        string // path_hash or path
	hashed     bool
	eq         string // the condition "entry e's path is k.of's value"
	stat       string // an entry (entryCols) by its path
	statHidden string // stat, and whether a tree operation hides a tree
}

func newPathKey(hashed bool) pathKey {
	k := pathKey{col: "path", hashed: hashed}
	if hashed {
		k.col = "path_hash"
	}
	k.eq = `e.` + k.col + ` = ?`
	k.stat = `SELECT ` + entryCols + ` FROM entries WHERE ` + k.col + ` = ?`
	// Almost never true, and then Stat checks the path's ancestors (see
	// treeops.go).
	k.statHidden = `SELECT ` + entryCols + `, EXISTS (SELECT 1 FROM tree_ops WHERE hidden = 1) FROM entries WHERE ` + k.col + ` = ?`
	return k
}

// of is path's value in the key column.
func (k pathKey) of(p string) any {
	if k.hashed {
		return pathHash(p)
	}
	return p
}

// in is the condition "entry e's path is one of n", for k.args' values.
func (k pathKey) in(n int) string {
	return `e.` + k.col + ` IN (` + placeholders(n) + `)`
}

// args appends the key values of paths to args.
func (k pathKey) args(args []any, paths ...string) []any {
	for _, p := range paths {
		args = append(args, k.of(p))
	}
	return args
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
