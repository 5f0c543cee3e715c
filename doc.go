// Package shoal is the vocabulary of the shoal storage system: the things it
// stores (Entry, Replica), the machines that store them (Server, Pool,
// Layout), who makes a request and what it may do (Principal, Rights,
// Scope: built by auth/), the one error type with its kinds, and the
// interfaces that the rest of the tree implements:
//
//   - Catalog (catalog/, and the caching decorator in cache/): the namespace,
//     and the admin jobs (JobStore).
//   - Cache (cache/): a byte-valued key/value tier such as memcached.
//   - BlobStore (diskserver/, its HTTP client diskserver/remote, and ec/
//     over those): immutable objects on a data server.
//
// Each implementation lives in its own folder and passes the shared
// conformance suite for its interface (catalog/catalogtest,
// cache/cachetest, storetest).
//
// This package has no dependencies outside the standard library.
//
// It imports no project package: everything else imports it.
package shoal
