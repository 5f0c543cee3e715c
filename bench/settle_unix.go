//go:build unix

package bench

import "syscall"

// settleDisks writes back every dirty page of this machine (sync(2)), so
// that what one target wrote without an fsync is on disk before the other
// target's round rather than written back during it, at the cost of the
// fsyncs made then.
func settleDisks() { syscall.Sync() }
