package jobs

// Crash stops the runner as a killed process would: its jobs stop without
// being finished or handed back, so their leases lapse.
func (r *Runner) Crash() {
	close(r.crash)
	r.closed.Do(r.stop)
	r.wg.Wait()
}
