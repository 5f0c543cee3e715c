package cache

import (
	"context"
	"encoding/binary"

	"shoal"
)

// Dead properties in L2. PROPFIND asks for a path's dead properties
// (allprop, and every child of a Depth 1 listing); most paths have none,
// and without this each ask is one SQL query. The answer is cached under
// the key p:path with the same generations as the path's Stat answer
// (doc.go), so everything that can change it already invalidates it:
// PatchProps, overwrite and FinishUpload bump n:path; Remove, Move and
// Copy bump n:path and t:path of the paths they replace, and a move or
// removal of an ancestor bumps that ancestor's t. The in-process tier
// holds them too, beside Stat answers and invalidated with them (l1.go),
// so that PROPFIND allprop on a hot path costs no SQL. The returned
// slices are shared: callers must not modify them.
//
// Value format: byte propsVersion, uvarint n and n × 8-byte generations,
// uvarint count, then count × (string space, string name, string value).
const (
	keyProps     = 'p'
	propsVersion = 1
	maxProps     = 1 << 16
)

// Props answers from L2 when it holds the answer under the current
// generations, else asks the inner catalog and fills L2. Errors (a
// missing path, the catalog down) are never cached.
func (c *Catalog) Props(ctx context.Context, path string) ([]shoal.Prop, error) {
	if c.l1props == nil {
		return c.propsBelowL1(ctx, path)
	}
	if ps, _, ok := c.l1props.get(path); ok {
		c.counters.props.hits.Add(1)
		return ps, nil
	}
	tok := c.l1props.token(path)
	ps, err := c.propsBelowL1(ctx, path)
	if err == nil {
		c.l1props.put(path, tok, ps, nil)
	}
	return ps, err
}

// propsBelowL1 answers from L2 or the inner catalog.
func (c *Catalog) propsBelowL1(ctx context.Context, path string) ([]shoal.Prop, error) {
	if c.l2 == nil {
		return c.inner.Props(ctx, path)
	}
	gens, v, ok := c.l2.lookup(ctx, path, keyProps)
	if !ok {
		c.counters.props.errors.Add(1)
		return c.inner.Props(ctx, path)
	}
	if v != nil {
		if ps, err := decodeProps(v, gens); err == nil {
			c.counters.props.hits.Add(1)
			return ps, nil
		}
	}
	c.counters.props.misses.Add(1)
	ps, err := c.inner.Props(ctx, path)
	if err == nil {
		// A failed fill only costs a later miss.
		_ = c.l2.c.Set(ctx, c.l2.key(keyProps, path), appendProps(nil, gens, ps), c.l2.ttl)
	}
	return ps, err
}

func appendProps(b []byte, gens []uint64, ps []shoal.Prop) []byte {
	b = append(b, propsVersion)
	b = binary.AppendUvarint(b, uint64(len(gens)))
	for _, g := range gens {
		b = binary.LittleEndian.AppendUint64(b, g)
	}
	b = binary.AppendUvarint(b, uint64(len(ps)))
	for _, p := range ps {
		b = appendString(b, p.Space)
		b = appendString(b, p.Name)
		b = appendString(b, p.Value)
	}
	return b
}

// decodeProps parses a props value and checks that it was stored under
// gens; anything else (stale, malformed) is errCorrupt: a miss.
func decodeProps(b []byte, gens []uint64) ([]shoal.Prop, error) {
	d := decoder{b: b}
	if d.byte() != propsVersion {
		return nil, errCorrupt
	}
	if n := d.uvarint(); n != uint64(len(gens)) {
		return nil, errCorrupt
	}
	for _, g := range gens {
		if d.uint64() != g {
			return nil, errCorrupt
		}
	}
	n := d.uvarint()
	if n > maxProps || n > uint64(len(d.b)) {
		return nil, errCorrupt
	}
	var ps []shoal.Prop
	if n > 0 {
		ps = make([]shoal.Prop, n)
	}
	for i := range ps {
		ps[i] = shoal.Prop{Space: d.string(), Name: d.string(), Value: d.string()}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errCorrupt
	}
	return ps, nil
}
