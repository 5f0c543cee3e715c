package cache

import (
	"context"
	"encoding/binary"
	"time"
)

// A fact "no live lock exists", shared by every md through L2, for md
// that are not alone on their catalog (with SoleMD the fact is kept in
// process: absence.go). Without it every write of such an md asked the
// catalog for the locks over its path: one SQL statement of about four a
// small create costs MariaDB, the catalog every md shares (md itself
// spends about as much on the memcached round trip as it did on the query).
//
// Two keys: the generation g (8 random bytes, replaced by every change
// that may add a lock, after it committed and before it is answered, as
// the Stat generations are: see doc.go) and the finding f (the generation
// it was counted under, then 0 for none or 1 for some), kept for
// findingTTL. A finding is served only while g is what it was counted
// under, so a count that raced a new lock is never served. A finding of
// some only spares the count (the locks are then asked for as before); a
// finding of none answers the check. If a change's generation Set fails,
// other md may miss its lock for up to findingTTL.
const findingTTL = 2 * time.Second

const (
	keyLockGen     = 'G'
	keyLockFinding = 'F'
)

// makeLockKeys are the two keys of the locks' finding (kept in l2.lockKeys:
// every write through md asks for them).
func (l *l2) makeLockKeys() [2]string {
	return [2]string{l.key(keyLockGen, "locks"), l.key(keyLockFinding, "locks")}
}

// lockFinding reads the finding: known is whether one is current, none
// what it says; gen is the generation to count under otherwise (a missing
// one is set). ok is false when L2 failed.
func (l *l2) lockFinding(ctx context.Context) (known, none bool, gen uint64, ok bool) {
	keys := l.lockKeys
	var vals [2][]byte
	if err := l.get(ctx, keys[:], vals[:]); err != nil {
		return false, false, 0, false
	}
	if len(vals[0]) != 8 {
		gen, err := l.freshGen(ctx, keys[0])
		return false, false, gen, err == nil
	}
	gen = binary.LittleEndian.Uint64(vals[0])
	f := vals[1]
	if len(f) == 9 && binary.LittleEndian.Uint64(f) == gen {
		return true, f[8] == 0, gen, true
	}
	return false, false, gen, true
}

// learnLocks records a count of the live locks made under gen.
func (l *l2) learnLocks(ctx context.Context, gen uint64, n int) {
	v := binary.LittleEndian.AppendUint64(make([]byte, 0, 9), gen)
	v = append(v, 0)
	if n > 0 {
		v[8] = 1
	}
	_ = l.c.Set(ctx, l.lockKeys[1], v, findingTTL) // a failed fill costs a count
}

// dropLocks replaces the generation: every finding is void.
func (l *l2) dropLocks(ctx context.Context) {
	l.bump(ctx, l.lockKeys[:1])
}
