package cache

import (
	"context"
	"encoding/binary"
	"time"
)

// Facts shared by every md through L2, for md that are not alone on their
// catalog (with SoleMD they are kept in process: absence.go):
//   - that no live lock exists. Without it every write of such an md asked
//     the catalog for the locks over its path: one SQL statement of about
//     four a small create costs MariaDB, the catalog every md shares (md
//     itself spends about as much on the memcached round trip as it did on
//     the query);
//   - that no directory is mapped to a pool, with the default pool: every
//     create on a data server asked the catalog for its pool (a query over
//     the path's ancestors).
//
// A fact is two keys: the generation g (8 random bytes, replaced by every
// change that may falsify the fact, after it committed and before it is
// answered, as the Stat generations are: see doc.go) and the finding f
// (the generation it was made under, then its value), kept for
// findingTTL. A finding is served only while g is what it was made
// under, so a finding that raced a change is never served. If a change's
// generation Set fails, other md may go by the old finding for up to
// findingTTL.
const findingTTL = 2 * time.Second

const (
	keyFactGen     = 'G'
	keyFactFinding = 'F'
)

// fact is the two keys of one shared fact.
type fact [2]string

// makeFact is the keys of the fact called name (made once: every write
// through md reads the locks' fact).
func (l *l2) makeFact(name string) fact {
	return fact{l.key(keyFactGen, name), l.key(keyFactFinding, name)}
}

// finding reads f: known is whether a finding is current, and v its
// value then; gen is the generation to make a finding under otherwise (a
// missing one is set). ok is false when L2 failed.
func (l *l2) finding(ctx context.Context, f fact) (v []byte, known bool, gen uint64, ok bool) {
	var vals [2][]byte
	if err := l.get(ctx, f[:], vals[:]); err != nil {
		return nil, false, 0, false
	}
	if len(vals[0]) != 8 {
		gen, err := l.freshGen(ctx, f[0])
		return nil, false, gen, err == nil
	}
	gen = binary.LittleEndian.Uint64(vals[0])
	if fv := vals[1]; len(fv) > 8 && binary.LittleEndian.Uint64(fv) == gen {
		return fv[8:], true, gen, true
	}
	return nil, false, gen, true
}

// learn records the finding v, made under gen.
func (l *l2) learn(ctx context.Context, f fact, gen uint64, v []byte) {
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(v)), gen)
	_ = l.c.Set(ctx, f[1], append(b, v...), findingTTL) // a failed fill costs a new finding
}

// forget replaces f's generation: every finding of it is void.
func (l *l2) forget(ctx context.Context, f fact) {
	l.bump(ctx, f[:1])
}
