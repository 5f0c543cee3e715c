// Package dav is the WebDAV and HTTP wire protocol md speaks, as pure
// functions and small types: PROPFIND, PROPPATCH and LOCK bodies read
// (a byte scanner for the bodies clients send, encoding/xml for the
// rest), multistatus, lock, Metalink and HTML listing documents written,
// the If, Depth, Destination, Overwrite, Timeout and Want-Digest headers
// parsed, and conditional requests (ETags, dates) evaluated. Every parser
// of untrusted input here has a fuzz target with a seed corpus.
//
// Nothing here does I/O: what a property needs beyond an entry (quotas,
// free space, locks) comes through PropSource, which md implements over
// its catalog. dav imports the root vocabulary (package shoal) and the
// standard library only: no other project package, no HTTP server.
package dav
