package main

import (
	"log/slog"
	"os"
	"sync"
	"time"

	"shoal/cmd/shoal/config"
	"shoal/internal/logline"
)

// Access lines (one per request) are many: written one write(2) each,
// they would cost a stat request a system call, and slog's handlers more
// than md's own work. They go through a logline.Buffer (whole lines,
// flushed every accessFlushEvery, when a chunk is full, and at exit, so
// they reach stderr up to that much later than the lines around them),
// written by a logline.Handler. Other log lines are written at once.
const accessFlushEvery = 100 * time.Millisecond

// The process's access log: one logline.Buffer over stderr, made when the
// first server asks for it, flushed by main before it exits.
var (
	accessOnce sync.Once
	accessBuf  *logline.Buffer
)

// accessLog is the logger a server writes its access lines to, in the
// configured format and level (nil when log.access is off).
func accessLog(c *config.Config) *slog.Logger {
	if !c.Log.Access {
		return nil
	}
	accessOnce.Do(func() {
		accessBuf = &logline.Buffer{W: os.Stderr}
		go accessBuf.FlushEvery(accessFlushEvery)
	})
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Log.Level)) // validated when loaded
	return slog.New(logline.NewHandler(accessBuf, c.Log.Format == "json", level))
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
