// Package jobs is shoal's admin work: repair, drain, scrub and fsck as
// free functions over narrow interfaces (Env), and the Runner that runs
// them as jobs recorded in the catalog (shoal.JobStore) — claimed under a
// lease, heartbeated with their progress, taken over and resumed from
// that progress by another runner when theirs dies, stopped by a cancel.
//
// It reaches data servers through shoal.BlobStore and runs the
// erasure-coding engine (ec) itself, which is why this work lives here and
// not in md: md only records jobs and follows them, and imports neither
// this package nor ec, gw or diskserver. cmd/shoal starts a Runner beside
// each md. jobs must not import md (md's tests run jobs' runners).
package jobs
