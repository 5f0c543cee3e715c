//go:build !unix

package bench

// settleDisks does nothing where sync(2) is not available.
func settleDisks() {}
