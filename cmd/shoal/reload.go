package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// reloaders are what a running shoal rereads on SIGHUP, in the order
// added: the users file (md), certificates (TLS). There is one SIGHUP
// handler per process (watchSIGHUP); each part of the process adds its
// reload here rather than catching the signal itself.
type reloaders struct {
	mu   sync.Mutex
	list []reloader
}

type reloader struct {
	name   string
	reload func() error
}

// add registers a reload; name says what it rereads, for the log.
func (r *reloaders) add(name string, reload func() error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, reloader{name, reload})
}

// reloadAll runs every reload, logging each outcome; one failing does not
// stop the others (it keeps what it had).
func (r *reloaders) reloadAll(log *slog.Logger) {
	r.mu.Lock()
	list := append([]reloader(nil), r.list...)
	r.mu.Unlock()
	if len(list) == 0 {
		log.Info("SIGHUP: nothing to reload")
	}
	for _, rl := range list {
		if err := rl.reload(); err != nil {
			log.Error("SIGHUP: reload failed; keeping what was loaded", "what", rl.name, "err", err)
			continue
		}
		log.Info("SIGHUP: reloaded", "what", rl.name)
	}
}

// watchSIGHUP starts the process's SIGHUP handler: until ctx ends, each
// SIGHUP runs every reload of r (without it, SIGHUP would end the process).
func watchSIGHUP(ctx context.Context, log *slog.Logger) *reloaders {
	r := &reloaders{}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
				r.reloadAll(log)
			}
		}
	}()
	return r
}
