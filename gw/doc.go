// Package gw is shoal's gateway: the HTTP server that makes a pool of data
// servers look like one data server with an erasure-coded (ec:K+M) or
// mirrored (replica:N) layout. The engine that stripes, encodes,
// reconstructs and mirrors is package ec; gw verifies the signed URL,
// finds the shard servers, runs ec over their HTTP clients, commits
// finished uploads to md and heartbeats.
//
// The contract with md: for a file of layout ec:K+M, md picks K+M distinct
// data servers (servers[i] holds shard i), one object id and a gw, records
// the upload (shoal.Upload{Servers, Object, Layout}) and redirects the PUT
// to wire.GatewayURL(keys, gwURL, "PUT", object, upload, layout, servers, exp).
// The gw writes shard i as that object id on servers[i] and commits
// wire.CommitRequest with K+M replicas {Server: servers[i], Object, Shard:
// i, Size and Sum (adler32) of the shard object}. A GET or HEAD goes to
// wire.GatewayURL(…, "GET", object, "", entry layout, servers ordered by
// Replica.Shard, exp). Shards are plain objects on their data servers, so
// md's garbage queue deletes them there like any replica. gw learns data
// server URLs from md's signed POST /.shoal/admin/servers.
//
// gw must not import md, catalog or cache: it knows md only through wire.
package gw
