// Package wire is shoal's internal HTTP contract: every /.shoal/ path and
// every request and reply of md's internal and admin API (commits of
// finished uploads, heartbeats, the garbage queue, pools, fsck, repair,
// drain, scrub and their progress), the data servers' internal calls, the
// gw's signed URL format, and how an error's kind travels (HeaderKind).
// Every call is a POST of a JSON body signed with the cluster secret (see
// sign): headers X-Shoal-Kid, X-Shoal-Exp and X-Shoal-Sig carry an HMAC
// over method, path, expiry and the SHA-256 of the body. Client makes such
// calls.
//
// wire imports only the root package and sign (and fasthttp for Client):
// md, the data servers, gw and the admin command all import it, never the
// other way round.
package wire

import (
	"time"

	"shoal"
)

// CommitRequest reports a durable upload (shoal.Commit on the wire).
type CommitRequest struct {
	Upload   string    `json:"upload"`
	Size     int64     `json:"size"`
	Adler32  string    `json:"adler32"` // 8 lower-case hex digits
	MD5      string    `json:"md5,omitempty"`
	SHA256   string    `json:"sha256,omitempty"`
	MTime    int64     `json:"mtime_ns,omitempty"` // 0: md's clock
	Replicas []Replica `json:"replicas"`
}

// Replica is shoal.Replica on the wire.
type Replica struct {
	Server string `json:"server"`
	Object string `json:"object"`
	Shard  int    `json:"shard,omitempty"`
	Size   int64  `json:"size"`
	Sum    uint32 `json:"sum"`
}

// CommitReply is md's answer to a successful commit; on failure md answers
// the error's status with a text/plain reason, which the data server relays
// to its client after deleting the object.
type CommitReply struct {
	Path    string `json:"path"`
	ETag    string `json:"etag"`
	Created bool   `json:"created"`
}

// Heartbeat registers a data server and reports its space.
type Heartbeat struct {
	ID    string `json:"id"`
	URL   string `json:"url"`
	Pool  string `json:"pool,omitempty"`
	Free  int64  `json:"free"`
	Total int64  `json:"total"`
	// Uploads are the upload ids the server is receiving: md renews
	// their reservations (at most MaxHeartbeatUploads are read).
	Uploads []string `json:"uploads,omitempty"`
}

// MaxHeartbeatUploads bounds the uploads one heartbeat renews.
const MaxHeartbeatUploads = 10_000

// GarbageRequest asks for due garbage of one server.
type GarbageRequest struct {
	Server string `json:"server"`
	Limit  int    `json:"limit"`
}

// GarbageItem is one object to delete.
type GarbageItem struct {
	ID     int64  `json:"id"`
	Object string `json:"object"`
}

// GarbageReply lists due garbage.
type GarbageReply struct {
	Items []GarbageItem `json:"items"`
}

// GarbageDone acknowledges deleted objects.
type GarbageDone struct {
	IDs []int64 `json:"ids"`
}

// ObjectList is a data server's inventory.
type ObjectList struct {
	Objects []shoal.ObjectInfo `json:"objects"`
}

// ToCommit converts a wire commit to the catalog's form.
func (c *CommitRequest) ToCommit() (*shoal.Commit, error) {
	sums, err := ParseSums(c.Adler32, c.MD5, c.SHA256)
	if err != nil {
		return nil, err
	}
	out := &shoal.Commit{Upload: c.Upload, Size: c.Size, Sums: sums}
	if c.MTime != 0 {
		out.MTime = time.Unix(0, c.MTime)
	}
	for _, r := range c.Replicas {
		if !shoal.ValidObjectID(r.Object) || r.Server == "" {
			return nil, shoal.Errorf("wire.Commit", shoal.KindInvalid, "bad replica %q on %q", r.Object, r.Server)
		}
		out.Replicas = append(out.Replicas, shoal.Replica{Server: r.Server, Object: r.Object, Shard: r.Shard, Size: r.Size, Sum: r.Sum})
	}
	return out, nil
}
