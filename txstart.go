package shoal

import "context"

type txStartKey struct{}

// WithTxStart returns ctx carrying start, for a Catalog write method
// given ctx to call as the transaction it runs for the call is about to
// begin: under a group commit, as the batch holding it begins. md makes
// a new object's bytes durable from then on (DeferredStager), alongside
// the commit: the creates of one batch, all written before it began,
// then share one sync of their bytes. start may be called more than once
// (a batch run again) or not at all (a call refused before its
// transaction): it must be idempotent, and a caller that needs it to
// have run calls it itself once the method has returned.
func WithTxStart(ctx context.Context, start func()) context.Context {
	return context.WithValue(ctx, txStartKey{}, start)
}

// TxStart is the start ctx carries (WithTxStart), or nil.
func TxStart(ctx context.Context) func() {
	start, _ := ctx.Value(txStartKey{}).(func())
	return start
}
