package main

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"shoal/cmd/shoal/config"
)

// Access lines (one per request) are many: written one write(2) each,
// they would cost a stat request a system call. They go through a
// lineBuffer instead: whole lines, flushed every accessFlushEvery, when
// a chunk is full, and at exit, so they reach stderr up to that much
// later than the lines around them. Other log lines are written at once.
const (
	accessFlushEvery = 100 * time.Millisecond
	// accessChunk keeps each write at most PIPE_BUF (4096) bytes of whole
	// lines: atomic on a pipe (journald, a supervisor), so a chunk never
	// interleaves with another writer's line.
	accessChunk = 4096
)

// lineBuffer buffers whole lines for w. Safe for concurrent use.
type lineBuffer struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
}

// Write takes one or more whole lines (slog writes a record at a time).
func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len()+len(p) > accessChunk {
		b.flushLocked()
	}
	if len(p) > accessChunk { // a line longer than a chunk goes on its own
		return b.w.Write(p)
	}
	return b.buf.Write(p)
}

// Flush writes what is buffered.
func (b *lineBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *lineBuffer) flushLocked() {
	if b.buf.Len() > 0 {
		_, _ = b.w.Write(b.buf.Bytes()) // a log that cannot be written is dropped
		b.buf.Reset()
	}
}

// flushEvery flushes b every interval, for the life of the process.
func (b *lineBuffer) flushEvery(interval time.Duration) {
	for range time.Tick(interval) {
		b.Flush()
	}
}

// The process's access log: one lineBuffer over stderr, made when the
// first server asks for it, flushed by main before it exits.
var (
	accessOnce sync.Once
	accessBuf  *lineBuffer
)

// accessLog is the logger a server writes its access lines to, in the
// configured format and level (nil when log.access is off).
func accessLog(c *config.Config) *slog.Logger {
	if !c.Log.Access {
		return nil
	}
	accessOnce.Do(func() {
		accessBuf = &lineBuffer{w: os.Stderr}
		go accessBuf.flushEvery(accessFlushEvery)
	})
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Log.Level)) // validated when loaded
	return slog.New(newLineHandler(accessBuf, c.Log.Format == "json", level))
}

// flushAccessLog writes the access lines still buffered.
func flushAccessLog() {
	if accessBuf != nil {
		accessBuf.Flush()
	}
}

// withComponent is l naming the component its lines come from (nil: nil).
func withComponent(l *slog.Logger, component string) *slog.Logger {
	if l == nil {
		return nil
	}
	return l.With("component", component)
}
