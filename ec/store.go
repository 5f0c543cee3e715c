package ec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/klauspost/reedsolomon"

	"shoal"
)

// DefaultStripeSize is the user bytes per stripe: 1 MiB, so each of the K
// data shards gets a chunk of 1 MiB/K per stripe. Memory per Create is about
// two stripes plus their parity.
const DefaultStripeSize = 1 << 20

// chunkAlign keeps chunks a multiple of the SIMD width of the encoder.
const chunkAlign = 64

// Options configures a Store.
type Options struct {
	K, M       int
	StripeSize int // user bytes per stripe; 0 means DefaultStripeSize
	// Shards are the K+M stores, in shard order: Shards[i] holds shard i
	// of every object (data shards first).
	Shards []shoal.BlobStore
}

// Store is a shoal.BlobStore over K+M shard stores. Every object is stored
// as one shard object of the same id on each shard store.
//
// Writes need all K+M shard stores (a degraded write passes Absent for the
// shards it leaves out, which accepts and discards them): otherwise Create
// fails (see writeFailure: KindInsufficient for a full store,
// KindUnavailable for one that cannot be reached) and removes what it
// wrote. Reads need any K
// good shards per stripe. Remove removes every shard it can reach and
// reports the unreachable ones with KindUnavailable after the others are
// gone; since removal is idempotent the caller (md's garbage queue) simply
// retries. Walk lists the union of the shard stores' objects.
type Store struct {
	k, m   int
	chunk  int64
	shards []shoal.BlobStore
	enc    reedsolomon.Encoder
}

var _ shoal.BlobStore = (*Store)(nil)

// New checks opts and returns a Store.
func New(opts Options) (*Store, error) {
	const op = "ec.New"
	if opts.K < 1 || opts.M < 1 || opts.K+opts.M > 256 {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "need K ≥ 1, M ≥ 1, K+M ≤ 256 (got %d+%d)", opts.K, opts.M)
	}
	if len(opts.Shards) != opts.K+opts.M {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "ec:%d+%d needs %d shard stores, got %d", opts.K, opts.M, opts.K+opts.M, len(opts.Shards))
	}
	for i, s := range opts.Shards {
		if s == nil {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "shard store %d is nil", i)
		}
	}
	stripe := opts.StripeSize
	if stripe == 0 {
		stripe = DefaultStripeSize
	}
	if stripe < opts.K || stripe > 256<<20 {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "stripe size %d out of range", stripe)
	}
	chunk := (int64(stripe) + int64(opts.K) - 1) / int64(opts.K)
	chunk = (chunk + chunkAlign - 1) / chunkAlign * chunkAlign
	enc, err := newEncoder(opts.K, opts.M)
	if err != nil {
		return nil, err
	}
	return &Store{k: opts.K, m: opts.M, chunk: chunk, shards: opts.Shards, enc: enc}, nil
}

// encoders caches one coder per K+M: the gw server makes a Store per
// request, and the coders are safe for concurrent use.
var encoders sync.Map // [2]int{K, M} → reedsolomon.Encoder

// newEncoder returns a Reed-Solomon coder. Concurrency comes from running
// many requests at once, so the coder itself stays on one goroutine.
func newEncoder(k, m int) (reedsolomon.Encoder, error) {
	if enc, ok := encoders.Load([2]int{k, m}); ok {
		return enc.(reedsolomon.Encoder), nil
	}
	enc, err := reedsolomon.New(k, m, reedsolomon.WithMaxGoroutines(1))
	if err != nil {
		return nil, shoal.Errorf("ec.New", shoal.KindInvalid, "reedsolomon: %v", err)
	}
	encoders.Store([2]int{k, m}, enc)
	return enc, nil
}

// Layout is the store's layout, ec:K+M.
func (s *Store) Layout() shoal.Layout { return shoal.Layout{Kind: shoal.LayoutEC, K: s.k, M: s.m} }

// Shards returns the shard stores, in shard order.
func (s *Store) Shards() []shoal.BlobStore { return s.shards }

func (s *Store) width() int { return s.k + s.m }

// eachShard runs fn for every shard index in parallel and returns the
// errors by index.
func (s *Store) eachShard(fn func(i int) error) []error {
	errs := make([]error, s.width())
	var wg sync.WaitGroup
	for i := range s.shards {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errs
}

// Remove implements shoal.BlobStore: it removes every shard; missing
// shards are fine. If some shard stores fail, the others are still removed
// and the error (KindUnavailable) names the failed ones, for a retry.
func (s *Store) Remove(ctx context.Context, id string) error {
	const op = "ec.Remove"
	if !shoal.ValidObjectID(id) {
		return shoal.Errorf(op, shoal.KindInvalid, "bad object id %q", id)
	}
	errs := s.eachShard(func(i int) error {
		if err := s.shards[i].Remove(ctx, id); err != nil && !shoal.IsKind(err, shoal.KindNotFound) {
			return err
		}
		return nil
	})
	if msg := shardErrors(errs); msg != "" {
		return shoal.Errorf(op, shoal.KindUnavailable, "%s: some shards not removed: %s", id, msg)
	}
	return nil
}

// writeFailure is the kind of a write that failed because some shard
// stores did: KindInsufficient (507, "no space": a client does not retry)
// only when a store said it has no room for the object; KindUnavailable
// (503, retry later) when a store could not be reached or failed
// otherwise, which a retry (on other servers, or once they are back) may
// cure.
func writeFailure(errs []error) shoal.Kind {
	for _, err := range errs {
		if shoal.IsKind(err, shoal.KindInsufficient) || shoal.IsKind(err, shoal.KindTooLarge) {
			return shoal.KindInsufficient
		}
	}
	return shoal.KindUnavailable
}

// shardErrors formats the non-nil errors by shard index ("" if none).
func shardErrors(errs []error) string {
	var b strings.Builder
	for i, err := range errs {
		if err != nil {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "shard %d: %v", i, err)
		}
	}
	return b.String()
}

// Walk implements shoal.BlobStore: the union of the objects on all shard
// stores, each reported once with its user size and mtime (read from a
// shard footer). Up to M shard stores may fail to list (every complete
// object is still on K others); an object whose footer no shard can give
// is reported with Size -1 so fsck sees it.
func (s *Store) Walk(ctx context.Context, fn func(shoal.ObjectInfo) error) error {
	const op = "ec.Walk"
	var mu sync.Mutex
	where := map[string][]int{} // id → shard indices holding it
	errs := s.eachShard(func(i int) error {
		return s.shards[i].Walk(ctx, func(oi shoal.ObjectInfo) error {
			mu.Lock()
			where[oi.ID] = append(where[oi.ID], i)
			mu.Unlock()
			return nil
		})
	})
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed > s.m {
		return shoal.Errorf(op, shoal.KindUnavailable, "%s", shardErrors(errs))
	}
	for id, idx := range where {
		if err := ctx.Err(); err != nil {
			return shoal.E(op, shoal.KindTimeout, err)
		}
		info := shoal.ObjectInfo{ID: id, Size: -1}
		for _, i := range idx {
			if f, err := s.readFooter(ctx, i, id); err == nil {
				info.Size, info.ModTime = f.Size, f.MTime
				break
			}
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

// readFooter reads the footer of one shard object.
func (s *Store) readFooter(ctx context.Context, i int, id string) (footer, error) {
	obj, err := s.shards[i].Open(ctx, id)
	if err != nil {
		return footer{}, err
	}
	defer obj.Close()
	if obj.Size() < HeaderSize+FooterSize {
		return footer{}, shoal.Errorf("ec.footer", shoal.KindCorrupt, "shard too short")
	}
	b := make([]byte, FooterSize)
	if _, err := obj.ReadAt(b, obj.Size()-FooterSize); err != nil {
		return footer{}, err
	}
	return parseFooter(b)
}

// Space implements shoal.BlobStore: user bytes that fit, K times the
// smallest shard store (every shard grows alike). Up to M shard stores may
// fail to answer.
func (s *Store) Space(ctx context.Context) (shoal.Space, error) {
	spaces := make([]shoal.Space, s.width())
	errs := s.eachShard(func(i int) error {
		var err error
		spaces[i], err = s.shards[i].Space(ctx)
		return err
	})
	var out shoal.Space
	first, failed := true, 0
	for i, err := range errs {
		if err != nil {
			failed++
			continue
		}
		if first || spaces[i].Free < out.Free {
			out.Free = spaces[i].Free
		}
		if first || spaces[i].Total < out.Total {
			out.Total = spaces[i].Total
		}
		first = false
	}
	if failed > s.m {
		return shoal.Space{}, shoal.Errorf("ec.Space", shoal.KindUnavailable, "%s", shardErrors(errs))
	}
	out.Free *= int64(s.k)
	out.Total *= int64(s.k)
	return out, nil
}

// isContextErr reports whether err is a cancellation or deadline.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
