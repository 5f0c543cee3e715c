package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestSIGHUP: one handler runs every reload on SIGHUP, a failing one not
// stopping the others, and the process lives on.
func TestSIGHUP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := watchSIGHUP(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var a, b atomic.Int32
	r.add("a", func() error { a.Add(1); return errors.New("broken") })
	r.add("b", func() error { b.Add(1); return nil })
	for i := 1; i <= 2; i++ {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for b.Load() < int32(i) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if a.Load() != int32(i) || b.Load() != int32(i) {
			t.Fatalf("after SIGHUP %d: reloads ran %d and %d times", i, a.Load(), b.Load())
		}
	}
}
