// Package wire is md's internal HTTP API, spoken by data servers (diskserver,
// gw) and admin tools: commits of finished uploads, heartbeats, the garbage
// queue. Every call is a POST of a JSON body signed with the cluster secret
// (see sign): headers X-Shoal-Kid, X-Shoal-Exp and X-Shoal-Sig carry an
// HMAC over method, path, expiry and the SHA-256 of the body.
package wire

import (
	"strconv"
	"time"

	"shoal"
	"shoal/sign"
)

// Paths of md's internal endpoints. User paths may never start with Prefix.
const (
	Prefix        = "/.shoal/"
	PathCommit    = "/.shoal/commit"       // CommitRequest → CommitReply (201 new, 204 replaced)
	PathHeartbeat = "/.shoal/heartbeat"    // Heartbeat → 204
	PathGarbage   = "/.shoal/garbage"      // GarbageRequest → GarbageReply
	PathGarbageOK = "/.shoal/garbage/done" // GarbageDone → 204
)

// Data-server internal endpoints (signed the same way), used by md for fsck.
const (
	PathObjects = "/.shoal/objects" // POST, empty body → ObjectList
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
}

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

// Headers returns the signature headers for a call to path with body,
// valid for ttl.
func Headers(keys *sign.Keys, method, path string, body []byte, ttl time.Duration) (kid, exp, sig string) {
	e := time.Now().Add(ttl).Unix()
	kid, sig = keys.Sign(method, path, e, sign.BodyDigest(body))
	return kid, strconv.FormatInt(e, 10), sig
}

// Verify checks the signature headers of an internal call; KindUnauthorized
// on any mismatch.
func Verify(keys *sign.Keys, method, path string, body []byte, kid, exp, sig string) error {
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return shoal.Errorf("wire.Verify", shoal.KindPermission, "bad %s header", sign.HeaderExpiry)
	}
	return keys.Verify(method, path, e, sign.BodyDigest(body), kid, sig, time.Now())
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
