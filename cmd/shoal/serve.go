package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"
)

// service is one HTTP server of this process with its listener.
type service struct {
	name  string
	ln    net.Listener
	serve func(net.Listener) error
	close func() error // stops accepting and waits for in-flight requests
}

// lateClose is what each service still open gets once the shutdown
// deadline has passed.
const lateClose = 100 * time.Millisecond

// runServices serves every service until ctx is done (SIGINT/SIGTERM) or
// one of them fails, then closes them in order — so list md before the
// data server its proxied requests still need — all within one timeout, and
// finally runs cleanup (closing the catalog). It returns nil on a clean
// shutdown.
func runServices(ctx context.Context, log *slog.Logger, timeout time.Duration, services []service, cleanup func() error) error {
	failed := make(chan error, len(services))
	for _, s := range services {
		go func() {
			if err := s.serve(s.ln); err != nil {
				failed <- fmt.Errorf("%s: %w", s.name, err)
			}
		}()
	}
	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down: finishing in-flight requests", "timeout", timeout)
	case runErr = <-failed:
		log.Error("server failed; shutting down", "err", runErr)
	}
	errs := []error{runErr}
	// One deadline for all: closed one after another, each with its own
	// timeout, a shutdown took up to a timeout per service (past a
	// unit's TimeoutStopSec).
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	late := deadline.C
	for _, s := range services {
		done := make(chan error, 1)
		go func() { done <- s.close() }()
		select {
		case err := <-done:
			if err != nil {
				errs = append(errs, fmt.Errorf("closing %s: %w", s.name, err))
			}
		case <-late:
			errs = append(errs, fmt.Errorf("closing %s: requests still running after %v", s.name, timeout))
			late = time.After(lateClose) // past the deadline: the rest get a moment each
		}
	}
	if cleanup != nil {
		if err := cleanup(); err != nil {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	if err == nil {
		log.Info("stopped cleanly")
	}
	return err
}
