package catalog

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// checkpointer copies an SQLite catalog's write-ahead log into the
// database file on a connection of its own, so that no commit waits for
// it (the writer has wal_autocheckpoint off): a checkpoint copies pages
// and fsyncs the database file, hundreds of milliseconds on a busy disk.
// PASSIVE checkpoints wait for nobody: the writer goes on appending to
// the log meanwhile, readers keep their snapshots, and the writer starts
// the log over once a checkpoint copied all of it. Only a log that grew
// past walHardLimit (readers pinning old frames at every checkpoint) gets
// a RESTART checkpoint, which waits for them and holds the writer.
type checkpointer struct {
	conn    *sql.DB
	commits func() uint64 // write transactions committed so far
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

const (
	walCheckEvery = 250 * time.Millisecond
	walHardLimit  = 64 << 10 // frames (of a page, 4 KiB): 256 MiB
)

func newCheckpointer(dsn string, commits func() uint64) (*checkpointer, error) {
	conn, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	ctx, stop := context.WithCancel(context.Background())
	c := &checkpointer{conn: conn, commits: commits, stop: stop}
	c.wg.Add(1)
	go c.loop(ctx)
	return c, nil
}

// loop checkpoints after every walCheckEvery in which something was
// committed.
func (c *checkpointer) loop(ctx context.Context) {
	defer c.wg.Done()
	tick := time.NewTicker(walCheckEvery)
	defer tick.Stop()
	var seen uint64
	mode := "PASSIVE"
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n := c.commits(); n == seen {
			continue
		} else {
			seen = n
		}
		var busy, frames, copied int
		// A failed checkpoint is tried again after the next commit.
		if err := c.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &frames, &copied); err != nil {
			continue
		}
		mode = "PASSIVE"
		if frames-copied > walHardLimit {
			mode = "RESTART"
			seen-- // at the next tick, whatever is committed meanwhile
		}
	}
}

func (c *checkpointer) close() {
	if c == nil {
		return
	}
	c.stop()
	c.wg.Wait()
	c.conn.Close()
}
