package md

import (
	"context"
	"io"
	"math"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/internal/objhttp"
	"shoal/placement"
)

// Local data: in `shoal all` md runs beside its data server and has its
// store (Options.LocalStore). A GET of a file with a replica there is
// answered by md itself, from the object's file with sendfile, instead of
// a 302 and a second request; an upload placed there is written into the
// store by md and committed in-process, instead of a 307 (or a relay) and
// the data server's commit call back to md. Everything else — other
// servers' replicas, erasure-coded files, a cluster — goes through the
// data servers' URLs as before.

// getLocal answers a GET of e from the local store when e has a replica
// there; false (nothing answered) when it has none or it cannot be
// opened, so that the caller sends the client to another replica.
func (s *Server) getLocal(ctx *fasthttp.RequestCtx, e *shoal.Entry) bool {
	if s.opts.LocalStore == nil || e.Layout.Kind == shoal.LayoutEC {
		return false
	}
	object := ""
	for _, r := range e.Replicas {
		if r.Server == s.opts.LocalServer {
			object = r.Object
			break
		}
	}
	if object == "" {
		return false
	}
	obj, err := s.opts.LocalStore.Open(s.base, object)
	if err != nil {
		return false
	}
	if obj.Size() != e.Size {
		obj.Close() // not the bytes the catalog describes: let its server answer
		return false
	}
	rs, ok := objhttp.Ranges(ctx, e.Size, objhttp.ValidatorsOf(e))
	if !ok {
		obj.Close()
		return true
	}
	s.setEntryHeaders(ctx, e)
	objhttp.SetStatus(ctx, rs, e.Size)
	objhttp.Send(ctx, obj, rs, e.Size)
	return true
}

// stagedUnreadMax is the largest body a PUT staged on md's own data
// server writes before its commit decides what would otherwise be read
// first (planPut's parent and path, localPlanFor's quotas): a refusal
// then costs at most this much disk.
const stagedUnreadMax = 1 << 20

// localPlan is where a PUT's body goes on md's own data server.
type localPlan struct {
	local  bool       // the body goes to the local store
	pool   shoal.Pool // its pool (local only)
	staged bool       // staged, then committed in one transaction (putLocalStaged)
}

// placeLocal decides, once per plan, whether an upload of p goes to the
// local store (its pool's layout is one replica and placement picks the
// local data server) and whether it can be staged.
func (s *Server) placeLocal(ctx context.Context, p *putPlan) *localPlan {
	if p.local == nil {
		p.local = s.localPlanFor(ctx, p)
	}
	return p.local
}

func (s *Server) localPlanFor(ctx context.Context, p *putPlan) *localPlan {
	if s.opts.LocalStore == nil {
		return &localPlan{}
	}
	pool, err := s.poolFor(ctx, p.path)
	if err != nil || placement.NeedsGateway(pool.Layout) {
		return &localPlan{} // the usual path answers the error
	}
	servers, err := s.placement.ForLayout(ctx, pool, s.opts.DegradedWrites, placement.PerServer(pool.Layout, p.length))
	if err != nil || len(servers) != 1 || servers[0].ID != s.opts.LocalServer {
		return &localPlan{}
	}
	lp := &localPlan{local: true, pool: pool}
	if _, ok := s.opts.LocalStore.(shoal.StagedCreator); ok {
		// The commit charges every quota over path exactly, so a
		// reservation only refuses a body too large for its quota
		// before it is written: worth a catalog read where the body may
		// be large.
		if lp.staged = p.length >= 0 && p.length <= stagedUnreadMax; !lp.staged {
			qs, err := s.cat.QuotasFor(ctx, p.path)
			lp.staged = err == nil && len(qs) == 0
		}
	}
	return lp
}

// putLocal writes the body of p into the local store and commits it: the
// reservation and the commit are the ones a data server's upload makes
// (same quotas, same conditions checked again at commit, same answer),
// without the HTTP hops. The object is durable (fsync'd by the store)
// before the commit, as on a data server.
func (s *Server) putLocal(ctx *fasthttp.RequestCtx, p *putPlan, body io.Reader) {
	const op = "PUT"
	lp := s.placeLocal(s.base, p) // worked out already by handlePut: memoized
	pool := lp.pool
	if lp.staged {
		s.putLocalStaged(ctx, s.opts.LocalStore.(shoal.StagedCreator), p, pool, body)
		return
	}
	now := time.Now()
	// md receives the body itself and renews the reservation as it goes
	// (renewingBody), as a data server's heartbeats would.
	u := s.newUpload(p, pool, []string{s.opts.LocalServer}, now.Add(s.opts.UploadTTL))
	if err := s.cat.BeginUpload(s.base, u); err != nil {
		objhttp.DrainBody(ctx)
		httperr.Write(ctx, err)
		return
	}
	b := &objhttp.Body{R: body, Want: p.length, Max: math.MaxInt64, Op: op} // handlePut bounds a chunked body by MaxPutBody
	b.Reserve(u.Reserve)
	r := &renewingBody{r: b, srv: s, upload: u.ID, last: now}
	info, sums, err := s.storeLocal(u.Object, r, p.length)
	if err != nil {
		s.abortLocal(u.ID)
		objhttp.DrainRest(ctx, b)
		httperr.Write(ctx, shoal.E(op, p.path, err))
		return
	}
	c := s.localCommit(u.Object, info, sums)
	c.Upload = u.ID
	e, err := s.cat.FinishUpload(s.base, c, time.Now().Add(s.opts.URLTTL))
	if err != nil {
		// As a data server whose commit md refused: the object goes, the
		// client gets the catalog's answer (412, 507, 409 …).
		s.opts.LocalStore.Remove(s.base, u.Object)
		s.abortLocal(u.ID)
		httperr.Write(ctx, err)
		return
	}
	answerWritten(ctx, e)
}

// putLocalStaged is putLocal of a small body, or where no quota governs
// the path: the body goes into the store staged, then one catalog
// transaction (PutFile) checks the conditions and the parent, charges the
// quotas over the path (which may refuse it) and makes the file visible,
// and the object is published. One transaction instead of two: under
// concurrent creates the catalog's one writer is what limits them. A
// crash before the publish leaves the object staged, and the next start
// publishes it or removes it as the catalog says (settle.Staged).
func (s *Server) putLocalStaged(ctx *fasthttp.RequestCtx, st shoal.StagedCreator, p *putPlan, pool shoal.Pool, body io.Reader) {
	const op = "PUT"
	max := p.length
	if max < 0 {
		max = math.MaxInt64 // handlePut bounds a chunked body by MaxPutBody
	}
	b := &objhttp.Body{R: body, Want: p.length, Max: max, Op: op}
	id := randomHex()
	info, sums, durable, err := createStaged(s.base, st, id, b, p.length)
	if err != nil {
		objhttp.DrainRest(ctx, b)
		httperr.Write(ctx, shoal.E(op, p.path, err))
		return
	}
	// The bytes are made durable while the entry is committed, from when
	// its transaction begins (so that the creates of one batch share a
	// sync); the 201 waits for both (see shoal.DeferredStager for a
	// crash in between).
	if durable == nil {
		durable = func() error { return nil }
	}
	synced := make(chan error, 1)
	startSync := sync.OnceFunc(func() { go func() { synced <- durable() }() })
	cond := p.cond
	cond.Client = p.client // a lock taken while the body streamed stops the commit
	e, err := s.cat.PutFile(shoal.WithTxStart(s.base, startSync), p.path, pool.Layout, s.localCommit(id, info, sums), cond, time.Now().Add(s.opts.URLTTL))
	startSync()
	serr := <-synced
	if err != nil {
		s.opts.LocalStore.Remove(s.base, id)
		httperr.Write(ctx, asPlanned(err))
		return
	}
	if serr != nil {
		// Committed, but its bytes not known durable: it stays staged,
		// unreadable, and the next start keeps it if its bytes are whole
		// or drops its entry.
		httperr.Write(ctx, shoal.E(op, p.path, serr))
		return
	}
	if err := st.Publish(s.base, id); err != nil {
		// Committed and durable, but not readable until a restart
		// publishes it: the client must not take it for a success.
		httperr.Write(ctx, shoal.E(op, p.path, err))
		return
	}
	answerWritten(ctx, e)
}

// createStaged is st's deferred staged create where it has one; else its
// create is durable when it returns, and durable nil.
func createStaged(ctx context.Context, st shoal.StagedCreator, id string, r io.Reader, size int64) (shoal.ObjectInfo, shoal.Sums, func() error, error) {
	if ds, ok := st.(shoal.DeferredStager); ok {
		return ds.CreateStagedDeferred(ctx, id, r, size)
	}
	info, sums, err := st.CreateStaged(ctx, id, r, size)
	return info, sums, nil, err
}

// storeLocal writes r (length bytes, or unknown when < 0) as object id of
// the local store, durably.
func (s *Server) storeLocal(id string, r io.Reader, length int64) (shoal.ObjectInfo, shoal.Sums, error) {
	if sc, ok := s.opts.LocalStore.(shoal.SizedCreator); ok && length >= 0 {
		return sc.CreateSized(s.base, id, r, length)
	}
	return s.opts.LocalStore.Create(s.base, id, r)
}

// localCommit is the commit of object id, written to the local store.
func (s *Server) localCommit(id string, info shoal.ObjectInfo, sums shoal.Sums) *shoal.Commit {
	c := &shoal.Commit{Size: info.Size, Sums: sums, MTime: info.ModTime,
		Replicas: []shoal.Replica{{Server: s.opts.LocalServer, Object: id, Size: info.Size, Sum: sums.Adler32}}}
	if c.MTime.IsZero() {
		c.MTime = time.Now()
	}
	return c
}

// abortLocal gives back what a failed local upload reserved, at once
// (best effort: its expiry does it otherwise).
func (s *Server) abortLocal(upload string) {
	_ = s.cat.AbortUpload(s.base, upload)
}

// renewingBody renews an upload's reservation while its body is read,
// every third of UploadTTL, so that an upload lives as long as it
// progresses (the idle limit on the connection cuts one that does not).
type renewingBody struct {
	r      io.Reader
	srv    *Server
	upload string
	last   time.Time
}

func (b *renewingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if now := time.Now(); now.Sub(b.last) > b.srv.opts.UploadTTL/3 {
		b.last = now
		if rerr := b.srv.cat.RenewUploads(b.srv.base, []string{b.upload}, now.Add(b.srv.opts.UploadTTL)); rerr != nil && err == nil {
			// Not fatal: the reservation has up to two thirds of its
			// life left, and the next read tries again.
			b.last = now.Add(-b.srv.opts.UploadTTL / 3).Add(time.Second)
		}
	}
	return n, err
}
