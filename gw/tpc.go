package gw

import (
	"context"
	"io"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/ec"
	"shoal/internal/httperr"
	"shoal/internal/objhttp"
	"shoal/tpc"
	"shoal/wire"
)

// serveTPC answers a third-party COPY md redirected here (a replica:N or
// ec:K+M file) with a gw URL signed for it (tpc.SignedMethod): a pull
// written as a PUT would be — the N copies or K+M shards, committed once
// the checksums matched — or a push of the file, read as a GET would.
func (s *Server) serveTPC(ctx *fasthttp.RequestCtx, id string) {
	const op = "gw.COPY"
	if s.opts.TPC == nil {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindNotAllowed, "third-party copy is not enabled on this gw"))
		return
	}
	req, err := tpc.ParseRedirected(tpc.HeadersOf(&ctx.Request.Header), op)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	get := objhttp.QueryGetter(ctx)
	sums := get(tpc.ParamSums)
	size, err := strconv.ParseInt(get(tpc.ParamSize), 10, 64)
	var greq wire.GatewayRequest
	if err == nil {
		greq, err = wire.VerifyGatewayURL(s.opts.Keys, tpc.SignedMethod(req.Mode, req.Remote, size, sums), id, get, time.Now())
	}
	if err != nil {
		if !shoal.IsKind(err, shoal.KindInvalid) {
			err = shoal.Errorf(op, shoal.KindPermission, "this URL is not signed for this copy")
		}
		httperr.Write(ctx, err)
		return
	}
	store, err := s.storeFor(greq)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if req.Mode == tpc.ModePull {
		s.tpcPull(ctx, req, store, id, greq, greq.Max)
		return
	}
	want, ok := tpc.ParseSums(sums)
	if !ok {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindInvalid, "bad %s", tpc.ParamSums))
		return
	}
	src := tpc.Source{Size: size, Sums: want, Open: func(c context.Context) (io.ReadCloser, error) {
		obj, err := store.OpenAt(c, id, 0)
		if err != nil {
			return nil, err
		}
		if obj.Size() != size {
			obj.Close()
			return nil, shoal.Errorf(op, shoal.KindCorrupt, "object %s has %d bytes, its file %d", id, obj.Size(), size)
		}
		return ec.NewReader(obj, 0, size), nil
	}}
	s.opts.TPC.Serve(ctx, tpc.ModePush, req.Remote, func(c context.Context, p *tpc.Progress) error {
		return s.opts.TPC.Push(c, req, src, p)
	})
}

// tpcPull writes the source as a PUT of the upload would, then commits
// one replica row per copy or shard. reserved is what md reserved for it
// (sign.ParamMax; sign.NoLimit: none): a source that sends more fails. A
// failed pull tells md at once, which gives the reservation back.
func (s *Server) tpcPull(ctx *fasthttp.RequestCtx, req *tpc.Request, store ec.LayoutStore, id string, greq wire.GatewayRequest, reserved int64) {
	const op = "gw.COPY"
	if greq.Upload == "" || s.md == nil {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindUnavailable, "no upload to commit to"))
		return
	}
	var w *ec.Written
	remove := func() {
		if err := store.Remove(context.Background(), id); err != nil && !shoal.IsKind(err, shoal.KindNotFound) {
			s.log.Error("removing an uncommitted copy", "object", id, "err", err)
		}
	}
	sink := tpc.Sink{
		Store: func(c context.Context, body io.Reader, size int64) (shoal.Sums, error) {
			switch {
			case reserved >= 0 && size > reserved:
				return shoal.Sums{}, shoal.Errorf(op, shoal.KindTooLarge, "the source has %d bytes, more than the %d reserved for it", size, reserved)
			case size > s.opts.MaxBodySize:
				return shoal.Sums{}, shoal.Errorf(op, shoal.KindTooLarge, "the source has %d bytes, more than the %d a file may have here", size, s.opts.MaxBodySize)
			}
			max := tpc.Limit(s.opts.MaxBodySize, reserved)
			var err error
			w, err = store.CreateShards(c, id, &objhttp.Body{R: body, Want: -1, Max: max, Op: op})
			if err != nil {
				return shoal.Sums{}, err
			}
			return w.Sums, nil
		},
		Commit: func(context.Context) error {
			commit := commitOf(greq, id, w)
			if _, _, err := objhttp.CommitCall(s.md, op, commit); err != nil {
				remove()
				return err
			}
			return nil
		},
		Abort: remove,
	}
	s.opts.TPC.Serve(ctx, tpc.ModePull, req.Remote, func(c context.Context, p *tpc.Progress) error {
		defer s.active.Begin(greq.Upload)()
		err := s.opts.TPC.Pull(c, req, sink, p)
		if err != nil {
			objhttp.Abort(s.md, greq.Upload, s.log.Warn)
		}
		return err
	})
}
