package cache

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"

	"shoal"
)

// l2 is the shared tier's view of the namespace (the scheme is in doc.go).
type l2 struct {
	c      shoal.Cache
	prefix string
	ttl    time.Duration
	negTTL time.Duration
	cnt    *counters
	// locks, pools: the shared facts that no live lock exists and that no
	// directory is mapped to a pool (l2absence.go).
	locks, pools fact
}

// Key kinds: the tree generation of a directory, the node generation of a
// path, and the cached answer for a path.
const (
	keyTree  = 't'
	keyNode  = 'n'
	keyEntry = 'e'
)

// key is prefix, kind, and 22 characters of base64url SHA-256 of the path
// (128 bits): paths are up to 4096 bytes of any character, memcached keys
// at most 250 printable ones.
func (l *l2) key(kind byte, path string) string {
	sum := sha256.Sum256([]byte(path))
	b := make([]byte, 0, len(l.prefix)+1+22)
	b = append(b, l.prefix...)
	b = append(b, kind)
	b = base64.RawURLEncoding.AppendEncode(b, sum[:16])
	return string(b)
}

// appendGenKeys appends the generations a cached answer for path depends on: the
// tree generation of every proper ancestor except the root (which is never
// removed or renamed), then the node generation of path itself.
func (l *l2) appendGenKeys(keys []string, path string) []string {
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			keys = append(keys, l.key(keyTree, path[:i]))
		}
	}
	return append(keys, l.key(keyNode, path))
}

// l2Result is the outcome of a lookup in L2.
type l2Result struct {
	hit   bool
	entry *shoal.Entry
	kind  shoal.Kind // negative answer when hit and entry is nil
	// gens are the current generations, to record with a fill; nil when
	// L2 failed and must not be filled.
	gens []uint64
}

// stat fetches path's generations and cached answer in one GetMulti: one
// round trip to each memcached server holding one of the keys, in
// parallel. A missing generation (never set, evicted, memcached restarted)
// is replaced by a fresh random one before the catalog is read.
func (l *l2) stat(ctx context.Context, path string) l2Result {
	gens, v, ok := l.lookup(ctx, path, keyEntry)
	if !ok {
		l.cnt.l2.errors.Add(1)
		return l2Result{}
	}
	if v != nil {
		if c, err := decodeValue(v); err == nil && equalGens(c.gens, gens) &&
			(c.entry == nil || c.entry.Path == path) {
			l.cnt.l2.hits.Add(1)
			return l2Result{hit: true, entry: c.entry, kind: c.kind, gens: gens}
		}
	}
	l.cnt.l2.misses.Add(1)
	return l2Result{gens: gens}
}

// lookup fetches path's generations and its cached answer of one kind
// (keyEntry, keyProps) in one multi-get, and sets the generations that
// are missing. ok is false when L2 failed: then nothing may be filled.
func (l *l2) lookup(ctx context.Context, path string, answer byte) (gens []uint64, v []byte, ok bool) {
	var keyBuf [9]string
	keys := l.appendGenKeys(keyBuf[:0], path)
	ngen := len(keys)
	keys = append(keys, l.key(answer, path))
	var valBuf [9][]byte
	vals := valBuf[:0]
	if len(keys) > len(valBuf) {
		vals = make([][]byte, len(keys))
	} else {
		vals = valBuf[:len(keys)]
	}
	if err := l.get(ctx, keys, vals); err != nil {
		return nil, nil, false
	}
	gens = make([]uint64, ngen)
	for i, k := range keys[:ngen] {
		if v := vals[i]; len(v) == 8 {
			gens[i] = binary.LittleEndian.Uint64(v)
			continue
		}
		g, err := l.freshGen(ctx, k)
		if err != nil {
			return nil, nil, false
		}
		gens[i] = g
	}
	return gens, vals[ngen], true
}

// freshGen sets the generation key k, found missing, to a fresh random
// value, and returns it.
func (l *l2) freshGen(ctx context.Context, k string) (uint64, error) {
	g := rand.Uint64()
	return g, l.c.Set(ctx, k, binary.LittleEndian.AppendUint64(nil, g), genTTL)
}

// get fetches keys into vals (nil for a missing key) with the cheapest
// call the tier has.
func (l *l2) get(ctx context.Context, keys []string, vals [][]byte) error {
	if ig, ok := l.c.(IntoGetter); ok {
		return ig.GetInto(ctx, keys, vals)
	}
	m, err := getMulti(ctx, l.c, keys)
	if err != nil {
		return err
	}
	for i, k := range keys {
		vals[i] = m[k]
	}
	return nil
}

func equalGens(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// fill stores the catalog's answer under the generations read before the
// catalog was: if a mutation bumped one of them since, the value is born
// stale and never served.
func (l *l2) fill(ctx context.Context, path string, gens []uint64, e *shoal.Entry, negative shoal.Kind) {
	ttl := l.ttl
	if e == nil {
		ttl = l.negTTL
	}
	// A failed fill only costs a later miss.
	_ = l.c.Set(ctx, l.key(keyEntry, path), appendValue(nil, gens, e, negative), ttl)
}

// bump gives each generation key a fresh random value, all at once.
func (l *l2) bump(ctx context.Context, keys []string) {
	if ms, ok := l.c.(MultiSetter); ok {
		buf := make([]byte, 0, 8*len(keys))
		vals := make([][]byte, len(keys))
		for i := range vals {
			buf = binary.LittleEndian.AppendUint64(buf, rand.Uint64())
			vals[i] = buf[8*i : 8*i+8]
		}
		if err := ms.SetMulti(ctx, keys, vals, genTTL); err != nil {
			l.cnt.invalidationErrors.Add(uint64(len(keys)))
		}
		return
	}
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			v := binary.LittleEndian.AppendUint64(nil, rand.Uint64())
			if err := l.c.Set(ctx, k, v, genTTL); err != nil {
				l.cnt.invalidationErrors.Add(1)
			}
		})
	}
	wg.Wait()
}
