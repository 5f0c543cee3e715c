package wire

import (
	"net/url"
	"strconv"
	"time"
)

// Every path under Prefix. User paths may never start with it: md answers
// them itself (the metrics middleware first).
const Prefix = "/.shoal/"

// md's internal endpoints, called by data servers and gws.
const (
	PathCommit    = "/.shoal/commit"       // CommitRequest → CommitReply (201 new, 204 replaced)
	PathHeartbeat = "/.shoal/heartbeat"    // Heartbeat → 204
	PathGarbage   = "/.shoal/garbage"      // GarbageRequest → GarbageReply
	PathGarbageOK = "/.shoal/garbage/done" // GarbageDone → 204
	PathAbort     = "/.shoal/abort"        // AbortRequest → 204 (404: unknown upload)
)

// md's admin endpoints (used by `shoal admin`; gw lists the data servers
// with PathAdminServers). The long operations stream their answer to a
// request that accepts StreamType.
const (
	PathAdminFsck    = "/.shoal/admin/fsck"     // {} → FsckReport
	PathAdminServers = "/.shoal/admin/servers"  // {} → []shoal.Server
	PathAdminPools   = "/.shoal/admin/pools"    // {} → []shoal.Pool
	PathAdminPoolAdd = "/.shoal/admin/pool/add" // PoolAddRequest → 204
	PathAdminPoolSet = "/.shoal/admin/pool/set" // PoolSetRequest → 204
	PathAdminRepair  = "/.shoal/admin/repair"   // {} → RepairReport
	PathAdminDrain   = "/.shoal/admin/drain"    // DrainRequest → DrainReport
	PathAdminScrub   = "/.shoal/admin/scrub"    // ScrubRequest → ScrubReport
)

// md's admin API for jobs (signed POSTs, JSON; see shoal.Job). A job is
// created through any md, run by whichever md's runner claims it, and
// shown, followed and cancelled through any md.
const (
	PathAdminJobs      = "/.shoal/admin/jobs"       // JobsRequest → []shoal.Job (newest first, no results)
	PathAdminJobCreate = "/.shoal/admin/job/create" // JobRequest → shoal.Job (queued)
	PathAdminJob       = "/.shoal/admin/job"        // JobID → shoal.Job (with its result)
	PathAdminJobCancel = "/.shoal/admin/job/cancel" // JobID → shoal.Job (cancelled)
	PathAdminJobFollow = "/.shoal/admin/job/follow" // JobID → Stream of Progress, then the result (or the result alone)
)

// A data server's internal endpoints (signed the same way), used by md
// for fsck and by remote clients for Space.
const (
	PathObjects = "/.shoal/objects" // {} → ObjectList
	PathSpace   = "/.shoal/space"   // {} → shoal.Space
)

// Endpoints every server's metrics middleware answers (GET and HEAD,
// unsigned).
const (
	PathMetrics = "/.shoal/metrics" // Prometheus text format
	PathHealthz = "/.shoal/healthz" // 200 "ok", or 503 while a backend is down
)

// Response headers a data server's or gw's PUT answers with, so that gw,
// repair and remote clients learn the stored object's size and checksums
// (RFC 3230 Digest: adler32 in hex as WLCG does, md5 in base64).
const (
	HeaderDigest = "Digest"
	HeaderSize   = "X-Shoal-Size"
)

// HeaderServerTTL is md's md.server_ttl on its answer to PathAdminServers
// (a Go duration): a server is live while its last heartbeat is younger.
const HeaderServerTTL = "X-Shoal-Server-Ttl"

// ParamRequestID is the query parameter md adds to the signed data-server
// and gw URLs it redirects or proxies to: md's X-Request-Id of the request,
// so the data server's access line can be matched with md's. It is not
// signed (it grants nothing) and data servers sanitize it like md does.
const ParamRequestID = "rid"

// ParamETag and ParamModified are the query parameters md adds to the
// data-server and gw URLs it redirects a read to: the file's ETag and
// Last-Modified (Unix seconds), which the server answers with and compares
// an If-Range with (it does not know md's). Not signed: a client that
// changes them changes only its own answer.
const (
	ParamETag     = "etag"
	ParamModified = "lm"
)

// WithValidators is the read URL u with the file's ETag and
// Last-Modified (ParamETag, ParamModified).
func WithValidators(u, etag string, modified time.Time) string {
	return u + "&" + ParamETag + "=" + url.QueryEscape(etag) + "&" + ParamModified + "=" + strconv.FormatInt(modified.Unix(), 10)
}
