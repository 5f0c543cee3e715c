package bench

import (
	"context"
	"time"
)

// Versus runs the same workload against two targets alternately — a for
// one round, then b, rounds times — so that both see the same noise of a
// shared machine. It returns each target's result over all its rounds and
// the pairs: one per round and an overall one (Round 0), ratio a/b.
// settle, if not nil, runs before the first round and after every round
// of either target, unmeasured.
func Versus(ctx context.Context, a, b *Runner, rounds int, lim Limits, settle func()) (ra, rb Result, pairs []Pair) {
	if rounds < 1 {
		rounds = 1
	}
	var ta, tb tally
	var ea, eb time.Duration
	spec := a.Spec()
	pair := func(round int, x, y *Result) Pair {
		p := Pair{Workload: spec.Name, Size: spec.Size, Round: round, A: a.opts.URL, B: b.opts.URL,
			AReqPS: x.ReqPerSec, BReqPS: y.ReqPerSec}
		if y.ReqPerSec > 0 {
			p.Ratio = x.ReqPerSec / y.ReqPerSec
		}
		return p
	}
	if settle == nil {
		settle = func() {}
	}
	settle()
	for i := 1; i <= rounds && ctx.Err() == nil; i++ {
		t1, e1 := a.phase(ctx, lim)
		settle()
		t2, e2 := b.phase(ctx, lim)
		settle()
		x, y := t1.result(e1), t2.result(e2)
		pairs = append(pairs, pair(i, &x, &y))
		ta.merge(t1)
		tb.merge(t2)
		ea += e1
		eb += e2
	}
	ra, rb = ta.result(ea), tb.result(eb)
	a.label(&ra, lim)
	b.label(&rb, lim)
	pairs = append(pairs, pair(0, &ra, &rb))
	return ra, rb, pairs
}
