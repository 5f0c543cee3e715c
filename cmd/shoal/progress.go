package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// progress shows that a long admin call is running: on a terminal it
// rewrites one stderr line with what and the elapsed time every second;
// elsewhere (scripts, CI logs) it writes nothing. The returned func ends
// the line.
func progress(what string) (done func()) {
	if !isTerminal(os.Stderr) {
		return func() {}
	}
	return progressTo(os.Stderr, what, time.Second)
}

func progressTo(w io.Writer, what string, every time.Duration) (done func()) {
	start := time.Now()
	stop, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			fmt.Fprintf(w, "\r%s … %s", what, time.Since(start).Round(time.Second))
			select {
			case <-stop:
				fmt.Fprintf(w, "\r%s done in %s\n", what, time.Since(start).Round(time.Millisecond))
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(stop)
		<-finished
	}
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
