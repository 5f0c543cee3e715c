package logline

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// Chunk is the most a Buffer writes at once: whole lines of at most
// PIPE_BUF (4096) bytes are written atomically to a pipe (journald, a
// supervisor), so a chunk never interleaves with another writer's line.
const Chunk = 4096

// Buffer collects whole lines for W and writes them in chunks of at most
// Chunk bytes: when a chunk is full, on Flush, and every interval once
// FlushEvery runs. Safe for concurrent use.
type Buffer struct {
	W io.Writer

	mu  sync.Mutex
	buf bytes.Buffer
}

// Write takes one or more whole lines (slog writes a record at a time).
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len()+len(p) > Chunk {
		b.flushLocked()
	}
	if len(p) > Chunk { // a line longer than a chunk goes on its own
		return b.W.Write(p)
	}
	return b.buf.Write(p)
}

// Flush writes what is buffered.
func (b *Buffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *Buffer) flushLocked() {
	if b.buf.Len() > 0 {
		_, _ = b.W.Write(b.buf.Bytes()) // a log that cannot be written is dropped
		b.buf.Reset()
	}
}

// FlushEvery flushes b every interval, for the life of the process.
func (b *Buffer) FlushEvery(interval time.Duration) {
	for range time.Tick(interval) {
		b.Flush()
	}
}
