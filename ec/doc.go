// Package ec is shoal's erasure-coding engine: Store makes K+M BlobStores
// look like one (Reed-Solomon, K data and M parity shards per stripe, each
// chunk with its crc32c, in the self-describing shard format of format.go),
// and Mirror makes N of them look like one for replica:N writes. Both
// create, stream and read (reconstructing around missing or corrupt
// shards); Store also verifies (Verify, for scrub) and rebuilds (Repair).
// Absent stands for a shard a degraded write leaves out.
//
// The shard stores are any shoal.BlobStore: local disks in tests, the HTTP
// client of a data server in the gw. Stores that cost a round trip per
// request are read through the optional shoal.HeadOpener and
// shoal.RangeOpener when they have them.
//
// ec must not import anything that speaks HTTP (no fasthttp, no net/http,
// no diskserver, gw or wire) nor md, catalog or cache: it is the engine,
// the gw is its HTTP server, md only names layouts and servers.
package ec
