// Package tpc is shoal's side of WLCG HTTP third-party copy (HTTP-TPC):
// a COPY that names another endpoint, either as Source (this server
// pulls the file from there) or as a foreign Destination (this server
// pushes its file there), answered by the server that moves the bytes
// with 202 and a text/plain stream of performance markers ending in
// "success: Created" or "failure: <reason>".
//
// It holds what md, the data servers and the gws share: the parsers of
// the request's headers (mode, remote URL, TransferHeader mapping,
// Credential, X-Number-Of-Streams, RequireChecksumVerification,
// Overwrite) and of a peer's Digest; the outbound client (timeouts, the
// guard that keeps it away from loopback, link-local and shoal's own
// addresses, TLS roots for grid peers, never logging a credential); the
// pull and push engines over a Sink or a Source that each server
// implements over its own storage; the marker stream; the signed method
// a TPC URL from md carries; and the transfer counters.
//
// tpc must not import md, catalog, cache, gw, ec, diskserver or jobs:
// they import it.
package tpc
