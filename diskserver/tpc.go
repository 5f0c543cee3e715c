package diskserver

import (
	"context"
	"encoding/hex"
	"io"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/internal/netguard"
	"shoal/internal/objhttp"
	"shoal/sign"
	"shoal/tpc"
	"shoal/wire"
)

// serveTPC answers a third-party COPY md redirected here with a URL
// signed for it (tpc.SignedMethod): a pull into object id under md's
// upload reservation, committed through the ordinary commit once the
// checksums matched; or a push of object id. Refusals before the copy
// starts (no TPC, a bad signature, a missing object) are plain HTTP
// errors; after, the 202 stream's failure line.
func (s *Server) serveTPC(ctx *fasthttp.RequestCtx, id string) {
	const op = "diskserver.COPY"
	if s.opts.TPC == nil {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindNotAllowed, "third-party copy is not enabled on this data server"))
		return
	}
	req, err := tpc.ParseRedirected(tpc.HeadersOf(&ctx.Request.Header), op)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	get := objhttp.QueryGetter(ctx)
	sums := get(tpc.ParamSums)
	g := sign.Grant{Max: sign.NoLimit}
	size, err := strconv.ParseInt(get(tpc.ParamSize), 10, 64)
	if err == nil {
		g, err = s.opts.Keys.VerifyObjectQuery(tpc.SignedMethod(req.Mode, req.Remote, size, sums), id, get, time.Now())
	}
	if err != nil || g.CallerCommits { // md signs that for PUTs it sends itself only

		httperr.Write(ctx, shoal.Errorf(op, shoal.KindPermission, "this URL is not signed for this copy"))
		return
	}
	if req.Mode == tpc.ModePull {
		s.tpcPull(ctx, req, id, g.Upload, g.Max)
		return
	}
	s.tpcPush(ctx, req, id, size, sums)
}

// tpcPull fetches the source into object id, then commits it to md as
// the upload's data, as a PUT would. reserved is what md reserved for it
// (sign.ParamMax: the source's size, or for one of unknown size what a
// chunked PUT gets; sign.NoLimit: none): a source that sends more fails.
// A failed pull tells md at once, which gives the reservation back.
func (s *Server) tpcPull(ctx *fasthttp.RequestCtx, req *tpc.Request, id, upload string, reserved int64) {
	const op = "diskserver.COPY"
	if upload == "" || s.md == nil {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindUnavailable, "no upload to commit to"))
		return
	}
	var info shoal.ObjectInfo
	var sums shoal.Sums
	sink := tpc.Sink{
		Store: func(c context.Context, body io.Reader, size int64) (shoal.Sums, error) {
			switch {
			case reserved >= 0 && size > reserved:
				return shoal.Sums{}, shoal.Errorf(op, shoal.KindTooLarge, "the source has %d bytes, more than the %d reserved for it", size, reserved)
			case size > 0:
				if _, err := s.store.pickDisk(size); err != nil {
					return shoal.Sums{}, err // no room: said before a byte moves
				}
				if size > s.opts.MaxBodySize {
					return shoal.Sums{}, shoal.Errorf(op, shoal.KindTooLarge, "the source has %d bytes, more than the %d a file may have here", size, s.opts.MaxBodySize)
				}
			}
			b := &objhttp.Body{R: body, Want: -1, Max: tpc.Limit(s.opts.MaxBodySize, reserved), Op: op}
			var err error
			info, sums, err = s.store.CreateSized(c, id, b, size)
			return sums, err
		},
		Commit: func(context.Context) error {
			commit := wire.CommitRequest{
				Upload:   upload,
				Size:     info.Size,
				Adler32:  wire.FormatAdler32(sums.Adler32),
				MD5:      hex.EncodeToString(sums.MD5),
				MTime:    info.ModTime.UnixNano(),
				Replicas: []wire.Replica{{Server: s.opts.ID, Object: id, Size: info.Size, Sum: sums.Adler32}},
			}
			if _, _, err := objhttp.CommitCall(s.md, op, commit); err != nil {
				s.removeObject(id)
				return err
			}
			return nil
		},
		Abort: func() { s.removeObject(id) },
	}
	s.opts.TPC.Serve(ctx, tpc.ModePull, req.Remote, func(c context.Context, p *tpc.Progress) error {
		defer s.active.Begin(upload)() // heartbeats renew the reservation while it lasts
		err := s.opts.TPC.Pull(c, req, sink, p)
		if err != nil {
			objhttp.Abort(s.md, upload, s.log.Warn)
		}
		return err
	})
}

// tpcPush sends object id (size bytes, the catalog's sums) to the
// destination.
func (s *Server) tpcPush(ctx *fasthttp.RequestCtx, req *tpc.Request, id string, size int64, sums string) {
	const op = "diskserver.COPY"
	want, ok := tpc.ParseSums(sums)
	if !ok {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindInvalid, "bad %s", tpc.ParamSums))
		return
	}
	f, err := s.store.openFile(id)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	have := f.Size()
	f.Close()
	if have != size {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindCorrupt, "object %s has %d bytes, its file %d", id, have, size))
		return
	}
	src := tpc.Source{Size: size, Sums: want, Open: func(context.Context) (io.ReadCloser, error) {
		f, err := s.store.openFile(id)
		if err != nil {
			return nil, err
		}
		of, base := f.OSFile()
		return netguard.NewFileBody(of, base, f.Size(), f), nil
	}}
	s.opts.TPC.Serve(ctx, tpc.ModePush, req.Remote, func(c context.Context, p *tpc.Progress) error {
		return s.opts.TPC.Push(c, req, src, p)
	})
}

// removeObject drops an object a copy stored but must not keep.
func (s *Server) removeObject(id string) {
	if err := s.store.Remove(context.Background(), id); err != nil && !shoal.IsKind(err, shoal.KindNotFound) {
		s.log.Error("removing an uncommitted copy", "object", id, "err", err)
	}
}
