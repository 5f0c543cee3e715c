package md

import (
	"context"
	"log/slog"

	"shoal"
)

// reconcileStaged settles the objects a crash left staged in md's local
// store (see putLocalStaged): those a catalog entry names on server were
// committed and are published; the others never were and are removed.
// It walks server's replicas only when something is staged, which after a
// clean shutdown nothing is. Nothing to do for a store (or none) that
// stages nothing.
func reconcileStaged(ctx context.Context, cat shoal.Catalog, store shoal.BlobStore, server string, log *slog.Logger) error {
	st, ok := store.(shoal.StagedCreator)
	if !ok {
		return nil
	}
	ids, err := st.Staged(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	named := make(map[string]bool, len(ids))
	for _, id := range ids {
		named[id] = false
	}
	err = cat.WalkReplicas(ctx, server, func(_ string, r shoal.Replica) error {
		if _, ok := named[r.Object]; ok {
			named[r.Object] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	var published, removed int
	for id, committed := range named {
		if committed {
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
