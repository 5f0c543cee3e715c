package md

import (
	"context"
	"log/slog"

	"shoal"
)

// reconcileStaged settles the objects a crash left staged in md's local
// store (see putLocalStaged): those a catalog entry names on server were
// committed and are published; the others never were and are removed.
// The catalog is asked about the staged objects only (NamedObjects), so
// the cost is theirs, not the server's number of files; after a clean
// shutdown nothing is staged. Nothing to do for a store (or none) that
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
