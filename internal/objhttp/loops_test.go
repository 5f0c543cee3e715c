package objhttp

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestBeatRetriesSoon: a heartbeat that fails is tried again well before
// the next interval (with growing waits), and once one works the loop
// goes back to its interval.
func TestBeatRetriesSoon(t *testing.T) {
	const every = 4 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var calls []time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		Beat(ctx, every, func() error {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, time.Now())
			if len(calls) <= 3 {
				return errors.New("md unavailable")
			}
			return nil
		})
	}()
	deadline := time.Now().Add(every)
	for {
		mu.Lock()
		n := len(calls)
		mu.Unlock()
		if n >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // no fifth call this soon after a success
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 4 {
		t.Fatalf("%d calls in %v (three failing, then one working), want 4: %v", len(calls), every, calls)
	}
	for i := 1; i < 4; i++ {
		if gap := calls[i].Sub(calls[i-1]); gap >= every/2 {
			t.Errorf("retry %d came %v after the failure, want well within the %v interval", i, gap, every)
		}
	}
}
