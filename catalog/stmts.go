package catalog

import (
	"context"
	"database/sql"
	"sync"
)

// maxCachedStmts bounds the statements a stmtCache keeps prepared:
// statements with a variable number of placeholders (IN lists) come in
// many shapes, and only the common ones are worth keeping.
const maxCachedStmts = 256

// stmtCache keeps SQLite statements prepared, one per query text, so that
// the hot paths do not parse their SQL at every call (modernc's parser
// was 15 % of shoal all's CPU under a create load). Each *sql.Stmt is
// prepared once per connection of its pool (database/sql keeps the
// per-connection statements); a transaction uses it through Tx.Stmt.
// MySQL has none: its driver interpolates arguments client-side, one
// round trip per statement, where a prepared statement would add one.
type stmtCache struct {
	pool *sql.DB
	// inTx: the cache serves transactions on the pool's only connection,
	// which is busy whenever get is called; statements are then prepared
	// in the background, once the connection is free.
	inTx bool
	mu   sync.RWMutex
	m    map[string]*sql.Stmt // nil value: being prepared, or failed to
}

func newStmtCache(pool *sql.DB, inTx bool) *stmtCache {
	return &stmtCache{pool: pool, inTx: inTx, m: map[string]*sql.Stmt{}}
}

// get returns the prepared statement for q, or nil when it is not (yet)
// prepared: the caller then sends q as text (and gets its error there if
// it is bad).
func (c *stmtCache) get(ctx context.Context, q string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	s, ok := c.m[q]
	c.mu.RUnlock()
	if ok {
		return s
	}
	c.mu.Lock()
	if _, ok := c.m[q]; ok || c.m == nil || len(c.m) >= maxCachedStmts {
		c.mu.Unlock()
		return nil
	}
	c.m[q] = nil
	c.mu.Unlock()
	if c.inTx {
		go c.prepare(context.WithoutCancel(ctx), q)
		return nil
	}
	return c.prepare(ctx, q)
}

func (c *stmtCache) prepare(ctx context.Context, q string) *sql.Stmt {
	s, err := c.pool.PrepareContext(ctx, q)
	if err != nil {
		return nil // stays nil: sent as text from now on
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil { // closed meanwhile
		s.Close()
		return nil
	}
	c.m[q] = s
	return s
}

func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.m {
		if s != nil {
			s.Close()
		}
	}
	c.m = nil
}
