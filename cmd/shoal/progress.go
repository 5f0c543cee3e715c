package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"shoal/wire"
)

// How often progress is shown: a terminal line is rewritten a few times a
// second; logs (scripts, CI, systemd) get a line per phase and every
// logEvery, enough to see a long drain move without flooding the log.
const (
	ttyEvery = 200 * time.Millisecond
	logEvery = 10 * time.Second
)

// progressPrinter shows a long operation's wire.Progress on stderr.
type progressPrinter struct {
	w     io.Writer
	tty   bool
	every time.Duration
	last  time.Time
	phase string
	width int            // of the last terminal line, to blank what a shorter one leaves
	held  *wire.Progress // the latest progress not shown yet
	text  string         // the last line shown
}

// newProgress is a printer to stderr, or nil (prints nothing) when quiet.
func newProgress(quiet bool) *progressPrinter {
	if quiet {
		return nil
	}
	tty := isTerminal(os.Stderr)
	every := logEvery
	if tty {
		every = ttyEvery
	}
	return &progressPrinter{w: os.Stderr, tty: tty, every: every}
}

// line is the wire.Stream callback: one progress line from md.
func (p *progressPrinter) line(raw json.RawMessage) {
	var pr wire.Progress
	if json.Unmarshal(raw, &pr) == nil {
		p.show(pr)
	}
}

// show prints pr if the phase changed or the interval passed, else holds
// it. A phase's last progress is shown before the next phase's, so a log
// tells where each phase ended.
func (p *progressPrinter) show(pr wire.Progress) {
	if p == nil {
		return
	}
	now := time.Now()
	if pr.Phase == p.phase && now.Sub(p.last) < p.every {
		p.held = &pr
		return
	}
	if p.held != nil {
		p.print(*p.held, now)
	}
	p.print(pr, now)
}

func (p *progressPrinter) print(pr wire.Progress, now time.Time) {
	p.held = nil
	p.last, p.phase = now, pr.Phase
	text := formatProgress(pr)
	if text == p.text {
		return
	}
	p.text = text
	if !p.tty {
		fmt.Fprintln(p.w, text)
		return
	}
	pad := ""
	if n := len([]rune(text)); n < p.width {
		pad = strings.Repeat(" ", p.width-n)
	}
	p.width = len([]rune(text))
	fmt.Fprintf(p.w, "\r%s%s", text, pad)
}

// end shows the last progress (where the operation stopped) and finishes
// the terminal line so what follows starts on its own.
func (p *progressPrinter) end() {
	if p == nil {
		return
	}
	if p.held != nil {
		p.print(*p.held, time.Now())
	}
	if p.tty && p.width > 0 {
		fmt.Fprintln(p.w)
	}
}

// formatProgress is e.g. "repair: checking 1234/10000 files (12%) · 3
// problems · read 1.2 GiB (45.0 MB/s) · 1m2s, about 7m left".
func formatProgress(pr wire.Progress) string {
	elapsed := time.Duration(pr.Elapsed) * time.Millisecond
	var b strings.Builder
	b.WriteString(pr.Op)
	b.WriteString(":")
	if pr.Phase != "" {
		b.WriteString(" " + pr.Phase)
	}
	unit := ""
	if pr.Unit != "" {
		unit = " " + pr.Unit
	}
	switch {
	case pr.Total > 0:
		fmt.Fprintf(&b, " %d/%d%s (%d%%)", pr.Done, pr.Total, unit, pr.Done*100/pr.Total)
	case pr.Done > 0 || pr.Unit != "":
		fmt.Fprintf(&b, " %d%s", pr.Done, unit)
	}
	fmt.Fprintf(&b, " · %d problems", pr.Problems)
	if pr.Bytes > 0 {
		fmt.Fprintf(&b, " · read %s", humanBytes(pr.Bytes))
		if elapsed > 0 {
			fmt.Fprintf(&b, " (%.1f MB/s)", float64(pr.Bytes)/1e6/elapsed.Seconds())
		}
	}
	fmt.Fprintf(&b, " · %s", elapsed.Round(time.Second))
	if phase := time.Duration(pr.PhaseElapsed) * time.Millisecond; pr.Done > 0 && pr.Done < pr.Total && phase >= time.Second {
		left := time.Duration(float64(phase) * float64(pr.Total-pr.Done) / float64(pr.Done))
		fmt.Fprintf(&b, ", about %s left", left.Round(time.Second))
	}
	return b.String()
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
