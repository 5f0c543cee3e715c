package shoal

import (
	"fmt"
	"time"
)

// Entry is one name in the namespace: a directory or a file. Entries
// returned by a Catalog are read-only to callers: caches share them.
type Entry struct {
	ID      int64  // catalog-wide unique, never reused
	Parent  int64  // ID of the parent directory; 0 for the root
	Path    string // clean absolute path ("/" for the root), no trailing slash
	IsDir   bool
	Size    int64     // bytes; 0 for directories
	MTime   time.Time // last content change
	CTime   time.Time // creation
	Version int64     // bumped on every overwrite; with ID it makes the ETag
	Sums    Sums      // for files
	Layout  Layout    // how the file's data was written (files only)
	Inline  []byte    // the whole content of a small file kept in the catalog; nil otherwise
	// Replicas says where the data is: one element per replica, or one per
	// shard for erasure-coded layouts. Empty for directories and inline files.
	Replicas []Replica
}

// Name is the last path element ("/" for the root).
func (e *Entry) Name() string {
	if e.Path == "/" {
		return "/"
	}
	for i := len(e.Path) - 1; i >= 0; i-- {
		if e.Path[i] == '/' {
			return e.Path[i+1:]
		}
	}
	return e.Path
}

// ETag is the strong entity tag of this version, quotes included.
func (e *Entry) ETag() string {
	return fmt.Sprintf("\"%x-%x\"", e.ID, e.Version)
}

// AppendETag appends the ETag to b without allocating (for the stat path).
func (e *Entry) AppendETag(b []byte) []byte {
	b = append(b, '"')
	b = appendHex(b, uint64(e.ID))
	b = append(b, '-')
	b = appendHex(b, uint64(e.Version))
	return append(b, '"')
}

func appendHex(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	if v == 0 {
		return append(b, '0')
	}
	var tmp [16]byte
	i := len(tmp)
	for v > 0 {
		i--
		tmp[i] = digits[v&15]
		v >>= 4
	}
	return append(b, tmp[i:]...)
}

// ShardServers lists an erasure-coded file's servers by shard index, and
// its object id (every shard has the same one); a shard without a row
// (left out by a degraded write, not yet repaired) has an empty server.
// KindCorrupt if the rows do not make the layout's shards, or too many
// are missing to read it.
func (e *Entry) ShardServers() (servers []string, object string, err error) {
	w := e.Layout.Width()
	servers = make([]string, w)
	for _, r := range e.Replicas {
		if r.Shard < 0 || r.Shard >= w || servers[r.Shard] != "" || (object != "" && r.Object != object) {
			return nil, "", Errorf("placement", KindCorrupt, "%s: bad shard rows for %s", e.Path, e.Layout)
		}
		servers[r.Shard], object = r.Server, r.Object
	}
	if missing := w - len(e.Replicas); missing >= max(e.Layout.M, 1) {
		return nil, "", Errorf("placement", KindCorrupt, "%s: %d of %s's shards have no row", e.Path, missing, e.Layout)
	}
	return servers, object, nil
}

// Sums are a file's checksums, computed while its data streamed in.
// Adler32 is always present for files (the WLCG default); MD5 is present
// when len(MD5) == 16; SHA256 when len(SHA256) == 32.
type Sums struct {
	Adler32 uint32
	MD5     []byte
	SHA256  []byte
}

// Replica is one copy (or one erasure-coded shard) of a file's data on a
// data server. Objects are immutable: an overwrite writes new objects, and
// several entries may share one object after a COPY; an object is garbage
// once no replica row names it.
type Replica struct {
	Server string // Server.ID
	Object string // object id on that server (lower-case hex, never a user path)
	Shard  int    // shard index for erasure-coded layouts; 0 for plain replicas
	Size   int64  // bytes of this object (the file size for plain replicas)
	Sum    uint32 // adler32 of this object, for repair and scrub of shards
}

// Prop is a WebDAV dead property: an XML element with its namespace, local
// name and inner XML, stored verbatim.
type Prop struct {
	Space string
	Name  string
	Value string // inner XML, as sent by the client
}

// Upload is a reservation made by md when it sends a client (or its own
// proxy stream) to a data server with a signed PUT URL. The data server's
// commit refers to it by ID; uploads never committed expire and their
// objects go to the garbage queue.
type Upload struct {
	ID      string // random, lower-case hex
	Path    string // the user path the file will take
	Servers []string
	Object  string    // object id reserved on each server
	Layout  Layout    // layout the file is written with
	Cond    Condition // checked at commit against the file it replaces
	Expires time.Time // after this the reservation is void, unless renewed (Writer.RenewUploads)
	// Client is who asked for the reservation (a principal, or an
	// address): BeginUpload refuses a client that holds MaxPending live
	// reservations already (KindTooMany; 0: no limit).
	Client     string
	MaxPending int
	// Reserve is the most bytes the upload may write: its Content-Length,
	// or for a body of unknown length what md allows (md.chunked_reserve).
	// BeginUpload charges it to the quotas governing Path, and the data
	// server stops the upload there (md signs it into the URL). With
	// Flexible (unknown length) BeginUpload may lower it to what the
	// quotas have left, and sets it to what it charged; where no quota
	// governs Path, it sets it to UnquotedMax unless that is 0: nothing is
	// charged then, and a chunked upload outside quotas need not be cut
	// at a reservation made for them.
	Reserve     int64
	Flexible    bool
	UnquotedMax int64 // Unbounded, or the most any PUT may write (md.max_put_body)
}

// Unbounded is an upload's Reserve when nothing bounds it but the data
// servers' own limits (sign.NoLimit in its URL).
const Unbounded int64 = -1

// Condition is what a write requires of the file it replaces (RFC 9110
// If-None-Match: * and If-Match), checked in the transaction that makes
// the new file visible, so that no concurrent writer slips in between
// md's look and the commit; KindPrecondition when it does not hold.
type Condition struct {
	CreateOnly bool     // the path must not exist
	IfMatch    []string // the path must be a file whose ETag is one of these ("*": any existing file)
	// Client, when set, is who writes (a principal, or "ip:ADDR" when
	// anonymous): Writer.PutFile then refuses with KindLocked if a live
	// lock of another principal covers the path, one taken while the body
	// streamed, after md checked the locks.
	Client string
}

// Holds reports whether cond allows replacing a file with etag (""
// when the path does not exist).
func (c Condition) Holds(etag string) bool {
	if c.CreateOnly && etag != "" {
		return false
	}
	if len(c.IfMatch) == 0 {
		return true
	}
	if etag == "" {
		return false
	}
	for _, m := range c.IfMatch {
		if m == "*" || m == etag {
			return true
		}
	}
	return false
}

// Commit is what a data server (or gw) reports when an upload's data is
// durable: md turns it into a visible entry in one catalog transaction.
type Commit struct {
	Upload   string // Upload.ID
	Size     int64
	Sums     Sums
	MTime    time.Time
	Replicas []Replica
}

// Garbage is an object that no entry references any more, to be removed
// from its server once NotBefore has passed (in-flight signed GETs may
// still be reading it until then).
type Garbage struct {
	ID        int64
	Server    string
	Object    string
	NotBefore time.Time
}
