package logline

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// writes records each Write call the buffer makes.
type writes struct {
	mu    sync.Mutex
	calls [][]byte
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, bytes.Clone(p))
	return len(p), nil
}

// TestBuffer: lines from many goroutines reach the output whole, in
// writes of at most a pipe's atomic size, none lost once flushed.
func TestBuffer(t *testing.T) {
	var out writes
	b := &Buffer{W: &out}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				fmt.Fprintf(b, "goroutine=%d line=%d %s\n", g, i, strings.Repeat("x", i%200))
			}
		}()
	}
	wg.Wait()
	long := strings.Repeat("y", 5000) + "\n"
	b.Write([]byte(long))
	b.Flush()
	lines := 0
	for _, c := range out.calls {
		if len(c) > Chunk && string(c) != long {
			t.Fatalf("a write of %d bytes", len(c))
		}
		if len(c) == 0 || c[len(c)-1] != '\n' {
			t.Fatalf("a write that does not end a line: %q", c)
		}
		lines += bytes.Count(c, []byte("\n"))
	}
	if lines != 8*500+1 {
		t.Fatalf("%d lines out of %d", lines, 8*500+1)
	}
	if len(out.calls) > 8*500/10 {
		t.Errorf("%d writes for 4000 lines: not buffered", len(out.calls))
	}
}
