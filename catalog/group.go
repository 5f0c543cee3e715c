package catalog

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"shoal"
)

// Group commit: concurrent write transactions share one SQL transaction
// and so one durable commit (one fsync of SQLite's WAL, one flush of
// InnoDB's redo log). Each caller's function runs inside its own
// savepoint; a caller whose function fails (a precondition, a conflict)
// is rolled back to it alone, the others go on. Nobody is answered
// before the shared COMMIT returned: the commit of a batch is as durable
// as the commit of a transaction of one (SQLite synchronous=FULL; InnoDB
// innodb_flush_log_at_trx_commit=1, see DB.Durability).
//
// There is no timer: a transaction queued while a worker is free runs at
// once (alone, when nobody else waits); those queued while every worker
// is busy make the next batch. Under load a batch is therefore as large
// as the arrivals during one batch.

// maxBatch bounds the transactions one batch runs, so that a batch holds
// the writer (and its locks) for a bounded time.
const maxBatch = 128

// errAlone tells a caller to run its function in a transaction of its
// own: its batch failed as a whole (a driver error, a deadlock that
// rolled the whole transaction back), so nothing of it was committed.
var errAlone = errors.New("catalog: batch failed, run alone")

type memberState int32

const (
	queued memberState = iota
	taken
	withdrawn
)

// member is one caller's transaction, queued for a batch.
type member struct {
	ctx   context.Context // the caller's
	fn    func(t *tx) error
	alone bool // never shares its transaction (long or bulk work)
	state atomic.Int32
	err   error // set before done is closed
	done  chan struct{}
}

// committer queues write transactions and runs them in batches: one
// worker per concurrent batch (1 for SQLite: its one writer), each taking
// the whole queue (up to maxBatch) whenever it is free.
type committer struct {
	db      *DB
	workers int
	kick    chan struct{} // something was queued
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup

	mu    sync.Mutex
	queue []*member

	batches, batched atomic.Uint64 // for GroupStats
}

func newCommitter(db *DB, workers int) *committer {
	ctx, stop := context.WithCancel(context.Background())
	workers = max(workers, 1)
	c := &committer{db: db, workers: workers, kick: make(chan struct{}, 1), ctx: ctx, stop: stop}
	for range workers {
		c.wg.Go(c.work)
	}
	return c
}

// close stops the workers; transactions still queued fail.
func (c *committer) close() {
	c.stop()
	c.wg.Wait()
	c.mu.Lock()
	q := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, m := range q {
		if m.state.CompareAndSwap(int32(queued), int32(taken)) {
			m.err = c.ctx.Err()
			close(m.done)
		}
	}
}

// work runs batches while there are any, then waits for a kick.
func (c *committer) work() {
	for {
		if batch, more := c.take(); len(batch) > 0 {
			if more {
				c.poke() // another worker, if one is idle, takes the rest
			}
			c.batches.Add(1)
			c.batched.Add(uint64(len(batch)))
			c.runBatch(batch)
			for _, m := range batch {
				close(m.done)
			}
			continue
		}
		select {
		case <-c.kick:
		case <-c.ctx.Done():
			return
		}
	}
}

// run runs fn in a batch (alone: in a transaction of its own, in queue
// order with the batches) and returns its outcome as inTx does, once its
// commit is durable.
func (c *committer) run(ctx context.Context, op, path string, alone bool, fn func(t *tx) error) error {
	if err := ctx.Err(); err != nil {
		return shoal.E(op, path, shoal.KindUnavailable, err)
	}
	// The wait in the queue counts towards the call's bound: behind
	// batches that a hung server holds, the queue would not move.
	bctx, cancel := c.db.bounded(ctx)
	defer cancel()
	m := &member{ctx: bctx, fn: fn, alone: alone, done: make(chan struct{})}
	c.mu.Lock()
	closed := c.ctx.Err() != nil
	if !closed {
		c.queue = append(c.queue, m)
	}
	c.mu.Unlock()
	if closed {
		return shoal.Errorf(op, shoal.KindUnavailable, "the catalog is closed")
	}
	c.poke()
	select {
	case <-m.done:
	case <-bctx.Done():
		if m.state.CompareAndSwap(int32(queued), int32(withdrawn)) {
			return c.db.fail(op, path, bctx.Err())
		}
		// Taken into a batch: its outcome comes with the batch's commit,
		// which this caller must report whatever it is.
		<-m.done
	}
	switch {
	case errors.Is(m.err, errAlone):
		return c.db.soloTx(ctx, op, path, m.fn)
	case m.err != nil:
		return c.db.fail(op, path, m.err)
	}
	c.db.space.wrote()
	return nil
}

// poke wakes an idle worker.
func (c *committer) poke() {
	select {
	case c.kick <- struct{}{}:
	default: // a kick is pending already
	}
}

// take pops the next batch: one alone member, or the longest run of
// sharing members up to maxBatch; withdrawn members are dropped. more
// says whether members are left in the queue.
func (c *committer) take() (batch []*member, more bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := 0
	for ; i < len(c.queue) && len(batch) < maxBatch; i++ {
		m := c.queue[i]
		if m.state.Load() == int32(withdrawn) {
			continue
		}
		if m.alone && len(batch) > 0 {
			break
		}
		if !m.state.CompareAndSwap(int32(queued), int32(taken)) {
			continue // withdrawn meanwhile
		}
		batch = append(batch, m)
		if m.alone {
			i++
			break
		}
	}
	n := copy(c.queue, c.queue[i:])
	clear(c.queue[n:])
	c.queue = c.queue[:n]
	return batch, n > 0
}

// runBatch runs the members in one transaction and sets each one's err.
func (c *committer) runBatch(batch []*member) {
	for _, m := range batch {
		txStarting(m.ctx)
	}
	if len(batch) == 1 {
		// Nobody to share with: a plain transaction, no savepoint.
		m := batch[0]
		err := c.db.tryTx(m.ctx, m.fn)
		var ce *commitError
		switch {
		case err == nil, errors.As(err, &ce), isDecision(err):
		default:
			// Retried (races, deadlocks) and classified by the caller, as
			// any transaction of its own.
			err = errAlone
		}
		m.err = err
		return
	}
	if !c.runShared(batch, false) {
		c.runShared(batch, true)
	}
}

// runShared runs batch in one transaction and sets each member's err.
// With savepoints each member runs in one of its own, rolled back alone
// when it fails. Without, a member that fails having changed nothing (a
// decision made on what it read: the file exists, the parent is missing)
// is simply left out, and one that fails otherwise (having written, a
// race, a driver error) rolls the whole transaction back: runShared then
// returns false, and the batch runs again with savepoints. Creates seldom
// fail, and SAVEPOINT and RELEASE were two of a create's five statements
// on the one writer's path.
func (c *committer) runShared(batch []*member, savepoints bool) (done bool) {
	db := c.db
	ctx, cancel := c.batchContext(batch)
	defer cancel()
	db.trips.Add(1)
	stx, err := db.write.BeginTx(db.steadyCtx(ctx), nil)
	if err != nil {
		setAll(batch, errAlone)
		return true
	}
	t := &tx{db: db, tx: stx, ctx: ctx}
	release := db.d.releaseSavepoints()
	for _, m := range batch {
		m.err = nil
		if err := m.ctx.Err(); err != nil {
			m.err = err // its caller gave up before it ran
			continue
		}
		if !savepoints {
			wrote := t.wrote
			if err := m.fn(t); err != nil {
				if t.wrote == wrote && isDecision(err) {
					m.err = err
					continue
				}
				stx.Rollback()
				db.dirs.forget() // what the batch read may have been undone
				return false
			}
			continue
		}
		if err := c.runMember(t, m, release); err != nil {
			// The transaction itself failed: nothing of the batch stays.
			stx.Rollback()
			setAll(batch, errAlone)
			return true
		}
	}
	db.trips.Add(1)
	if err := stx.Commit(); err != nil {
		// Whether such a commit happened is unknown to the driver too: the
		// callers are told it failed (as a transaction of one would be).
		for _, m := range batch {
			if m.err == nil {
				m.err = err
			}
		}
		return true
	}
	db.commits.Add(1)
	return true
}

// batchContext is the context a batch's statements run under: it ends
// when the committer closes or when every member's caller has given up
// (a hung database then lets go of them all), never because one did.
func (c *committer) batchContext(batch []*member) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(c.ctx)
	var left atomic.Int32
	left.Store(int32(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, m := range batch {
		stops[i] = context.AfterFunc(m.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// runMember runs m's function inside a savepoint of t, rolling back to it
// when the function fails; m.err is the function's decision (a
// *shoal.Error) or errAlone. It returns an error only when t is no longer
// usable.
func (c *committer) runMember(t *tx, m *member, release bool) error {
	for attempt := 0; ; attempt++ {
		if _, err := t.exec(nil, `SAVEPOINT shoal_m`); err != nil {
			return err
		}
		err := m.fn(t)
		if err == nil {
			if release {
				if _, err := t.exec(nil, `RELEASE shoal_m`); err != nil {
					return err
				}
			}
			return nil
		}
		if _, rerr := t.exec(nil, `ROLLBACK TO shoal_m`); rerr != nil {
			return rerr
		}
		c.db.dirs.forget() // what it read may have been undone
		if release {
			if _, rerr := t.exec(nil, `RELEASE shoal_m`); rerr != nil {
				return rerr
			}
		}
		switch {
		case errors.Is(err, errRace) && attempt < c.db.opts.TxRetries:
			continue // it now sees the row that won
		case isDecision(err):
			m.err = err
		default:
			m.err = errAlone
		}
		return nil
	}
}

// isDecision reports an error fn chose to return (a *shoal.Error), as
// opposed to a failure of the database.
func isDecision(err error) bool {
	var se *shoal.Error
	return errors.As(err, &se)
}

func setAll(batch []*member, err error) {
	for _, m := range batch {
		m.err = err
	}
}

// GroupStats reports how many batches committed write transactions and
// how many transactions they held: their ratio is the mean batch size.
func (db *DB) GroupStats() (batches, transactions uint64) {
	if db.group == nil {
		return 0, 0
	}
	return db.group.batches.Load(), db.group.batched.Load()
}
