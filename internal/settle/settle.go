// Package settle settles, at a start, what a crash left in the store md
// writes itself (`shoal all`'s own data server, a shoal.StagedCreator):
// the objects left staged (Staged) and the catalog entries of creates
// whose bytes never became durable (Lost, for a shoal.DeferredStager).
// md.New runs both before serving.
package settle

import (
	"context"
	"log/slog"
	"time"

	"shoal"
)

// Staged settles the objects a crash left staged in md's local
// store (md's putLocalStaged): those a catalog entry names on server were
// committed and are published; the others never were and are removed.
// The catalog is asked about the staged objects only (NamedObjects), so
// the cost is theirs, not the server's number of files; after a clean
// shutdown nothing is staged. Nothing to do for a store (or none) that
// stages nothing.
func Staged(ctx context.Context, cat shoal.Catalog, store shoal.BlobStore, server string, log *slog.Logger) error {
	st, ok := store.(shoal.StagedCreator)
	if !ok {
		return nil
	}
	ids, err := st.Staged(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	named, err := cat.NamedObjects(ctx, server, ids)
	if err != nil {
		return err
	}
	committed := make(map[string]bool, len(named))
	for _, id := range named {
		committed[id] = true
	}
	var published, removed int
	for _, id := range ids {
		if committed[id] {
			err = st.Publish(ctx, id)
			published++
		} else {
			err = store.Remove(ctx, id)
			removed++
		}
		if err != nil {
			return err
		}
	}
	if log != nil {
		log.Info("objects a crash left staged in the local store", "committed_published", published, "uncommitted_removed", removed)
	}
	return nil
}

// Lost removes the entries a crashed run committed for creates
// whose bytes never became durable in md's local store (a deferred
// create, shoal.DeferredStager: its 201 waited for both, so none of them
// was acknowledged). They are the entries on server whose object the
// store lacks and whose file was created since the crashed run began;
// an older entry whose object is missing is a loss fsck reports, and is
// left alone, as is one larger than any deferred create (MaxDeferred),
// whose object is not even looked for. Only after a crash, and it walks
// the server's replicas in the catalog once.
func Lost(ctx context.Context, cat shoal.Catalog, store shoal.BlobStore, server string, log *slog.Logger) error {
	ds, ok := store.(shoal.DeferredStager)
	if !ok {
		return nil
	}
	since, unsettled := ds.Unsettled()
	if !unsettled {
		return nil
	}
	type named struct{ path, object string }
	var missing []named
	maxDeferred := ds.MaxDeferred()
	err := cat.WalkReplicas(ctx, server, func(path string, r shoal.Replica) error {
		if path == "" || r.Size > maxDeferred {
			return nil // a file of its own was durable before its entry was committed
		}
		o, err := store.Open(ctx, r.Object)
		switch {
		case err == nil:
			return o.Close()
		case shoal.IsKind(err, shoal.KindNotFound):
			missing = append(missing, named{path, r.Object})
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	var removed int
	for _, m := range missing {
		e, err := cat.Stat(ctx, m.path)
		if shoal.IsKind(err, shoal.KindNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if e.MTime.Before(since) || !namesObject(e, server, m.object) {
			continue
		}
		if err := cat.Remove(ctx, m.path, time.Now()); err != nil && !shoal.IsKind(err, shoal.KindNotFound) {
			return err
		}
		removed++
		if log != nil {
			log.Warn("entry of a create a crash left without its bytes removed (never acknowledged)", "path", m.path)
		}
	}
	if log != nil {
		log.Info("entries a crash left without their bytes in the local store", "since", since, "removed", removed, "missing_left_for_fsck", len(missing)-removed)
	}
	return ds.Settled()
}

// namesObject reports whether e has object on server among its replicas.
func namesObject(e *shoal.Entry, server, object string) bool {
	for _, r := range e.Replicas {
		if r.Server == server && r.Object == object {
			return true
		}
	}
	return false
}
