// Package metrics is shoal's operator view: a small registry that writes
// the Prometheus text exposition format (version 0.0.4), an HTTP middleware
// that counts every request a server answers, and the health checks behind
// /.shoal/healthz.
//
// Both endpoints live under md's reserved internal prefix (wire.Prefix,
// "/.shoal/"), which no user path may start with, so they never shadow a
// file:
//
//	GET /.shoal/metrics   Prometheus text format
//	GET /.shoal/healthz   200 "ok", or 503 with the failing checks
//
// The hot path (one request through Middleware) does a handful of atomic
// adds on preallocated counters and allocates nothing.
//
// Own code rather than prometheus/client_golang: the registry is a few
// hundred lines, and client_golang (with its protobuf dependency) would add
// several MiB to a binary meant for a Pi Zero (see the README for the
// measured difference).
//
// metrics must not import md, catalog, the data servers or gw: they
// register with it. Its paths are wire's (wire.PathMetrics,
// wire.PathHealthz); a failing health check is a 503 with Retry-After
// (httperr.SetKind).
package metrics
