package catalog

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// checkpointer copies an SQLite catalog's write-ahead log into the
// database file on a connection of its own, so that no commit waits for
// it (the writer has wal_autocheckpoint off): a checkpoint copies pages
// and fsyncs the database file, hundreds of milliseconds on a busy disk.
// PASSIVE checkpoints wait for nobody: the writer goes on appending to
// the log meanwhile and readers keep their snapshots.
//
// The log starts over from its first frame only when a writer begins
// while the log is wholly copied and no reader holds a snapshot of it,
// which under a steady load of writes and reads never happens: the log
// then grew without end (1.2 GiB in 20 s of small creates), every commit
// appending to a growing file. So once a PASSIVE checkpoint finds the
// log past walRestartFrames, the checkpointer takes the
// writer's own connection between two transactions (it queues for it like
// the group commit does, so no writer is refused) and runs a RESTART
// checkpoint there: it copies the few frames committed since the PASSIVE
// one, waits at most walRestartWait for the readers of the log to finish,
// and the next commit starts the log over (and cuts the file to
// walSizeLimit). Readers that keep the log busy longer make it wait for
// the next tick; they no longer hold up writers for the busy timeout.
type checkpointer struct {
	conn          *sql.DB       // its own, for PASSIVE checkpoints
	writer        *sql.DB       // the writer's, for RESTART
	commits       func() uint64 // write transactions committed so far
	restartFrames int
	stop          context.CancelFunc
	wg            sync.WaitGroup

	restarts atomic.Uint64 // RESTART checkpoints that completed
}

const (
	walCheckEvery    = 250 * time.Millisecond
	walRestartFrames = 4 << 10 // frames (of a page, 4 KiB): 16 MiB
	walRestartWait   = 100 * time.Millisecond
	walSizeLimit     = 64 << 20 // bytes the log file is cut to when it starts over
)

func newCheckpointer(dsn string, writer *sql.DB, restartFrames int, commits func() uint64) (*checkpointer, error) {
	conn, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	ctx, stop := context.WithCancel(context.Background())
	c := &checkpointer{conn: conn, writer: writer, restartFrames: restartFrames, commits: commits, stop: stop}
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
		if err := c.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
			continue
		}
		if frames >= c.restartFrames {
			if !c.restart(ctx) {
				seen-- // again at the next tick, whatever is committed meanwhile
			}
		}
	}
}

// restart runs a RESTART checkpoint on the writer's connection and says
// whether it completed (false: readers held the log past walRestartWait).
func (c *checkpointer) restart(ctx context.Context) bool {
	conn, err := c.writer.Conn(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	var wait int64
	if err := conn.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&wait); err != nil {
		return false
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, walRestartWait.Milliseconds())); err != nil {
		return false
	}
	var busy, frames, copied int
	err = conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(RESTART)`).Scan(&busy, &frames, &copied)
	if _, rerr := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, wait)); rerr != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // never hand the writer on with the short wait
	}
	if err != nil || busy != 0 {
		return false
	}
	c.restarts.Add(1)
	return true
}

func (c *checkpointer) close() {
	if c == nil {
		return
	}
	c.stop()
	c.wg.Wait()
	c.conn.Close()
}
