package jobs

import (
	"context"
	"fmt"
	"sort"
	"time"

	"shoal"
	"shoal/wire"
)

// Fsck compares, for every non-retired server, the replicas the catalog
// names (Catalog.WalkReplicas) with the objects on the server's disks
// (store(server).Walk). Pending uploads' objects are not orphans, and
// objects already in the garbage queue (overwritten or deleted files, not
// yet removed by their server) are counted as queued garbage, not as
// orphans: they do not make the report fail. Objects
// listed after the catalog walk started may show as orphans if their
// upload committed meanwhile: run it twice before deleting anything. tr
// (may be nil) follows it server by server; a fsck taken over starts
// again.
func Fsck(ctx context.Context, env Env, tr *Tracker) (wire.FsckReport, error) {
	cat, store := env.Catalog, env.Store
	rep := wire.FsckReport{Orphans: []wire.FsckObject{}, Missing: []wire.FsckObject{}, Unreachable: []wire.FsckUnreached{}}
	servers, err := cat.Servers(ctx)
	if err != nil {
		return rep, err
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
	var checked []shoal.Server
	for _, sv := range servers {
		if sv.State != shoal.ServerRetired && sv.Pool != shoal.GatewayPool { // gws hold no data: their shards are on data servers
			checked = append(checked, sv)
		}
	}
	for i, sv := range checked {
		rep.Servers++
		tr.Phase(fmt.Sprintf("server %d/%d %s: reading the catalog", i+1, len(checked), sv.ID), "replicas", 0)
		type want struct {
			path string
			size int64
		}
		expected := map[string]want{}
		err := cat.WalkReplicas(ctx, sv.ID, func(path string, r shoal.Replica) error {
			if path != "" {
				rep.Replicas++
			}
			if _, ok := expected[r.Object]; !ok || path != "" {
				expected[r.Object] = want{path, r.Size}
			}
			tr.Done(1)
			return nil
		})
		if err != nil {
			return rep, err
		}
		// Read before the disks are listed: an object dropped from the
		// queue meanwhile has been removed, so it is not on the list.
		queued, err := queuedGarbage(ctx, cat, sv.ID)
		if err != nil {
			return rep, err
		}
		tr.Phase(fmt.Sprintf("server %d/%d %s: listing its disks", i+1, len(checked), sv.ID), "objects", int64(len(expected)))
		onDisk := map[string]int64{}
		err = store(sv).Walk(ctx, func(o shoal.ObjectInfo) error {
			onDisk[o.ID] = o.Size
			tr.Done(1)
			return nil
		})
		if err != nil {
			rep.Unreachable = append(rep.Unreachable, wire.FsckUnreached{Server: sv.ID, Error: shoal.Reason(err)})
			tr.Problem(1)
			continue
		}
		before := len(rep.Orphans) + len(rep.Missing)
		rep.Objects += int64(len(onDisk))
		for id, size := range onDisk {
			switch _, ok := expected[id]; {
			case ok:
			case queued[id]:
				rep.Garbage++ // its server's garbage loop removes it
			default:
				rep.Orphans = append(rep.Orphans, wire.FsckObject{Server: sv.ID, Object: id, Size: size})
			}
		}
		for id, w := range expected {
			if w.path == "" {
				continue // a pending upload: it may not have started
			}
			size, ok := onDisk[id]
			switch {
			case !ok:
				rep.Missing = append(rep.Missing, wire.FsckObject{Server: sv.ID, Object: id, Path: w.path, Size: w.size, Reason: "not on disk"})
			case size != w.size:
				rep.Missing = append(rep.Missing, wire.FsckObject{Server: sv.ID, Object: id, Path: w.path, Size: w.size, Found: size, Reason: "size mismatch"})
			}
		}
		tr.Problem(len(rep.Orphans) + len(rep.Missing) - before)
	}
	sortObjects(rep.Orphans)
	sortObjects(rep.Missing)
	rep.OK = len(rep.Orphans) == 0 && len(rep.Missing) == 0 && len(rep.Unreachable) == 0
	return rep, nil
}

// queuedGarbage is the set of objects queued as garbage on server, due or
// not yet (within their grace period).
func queuedGarbage(ctx context.Context, cat Catalog, server string) (map[string]bool, error) {
	const all = 1 << 30
	items, err := cat.Garbage(ctx, server, time.Now().Add(100*365*24*time.Hour), all)
	if err != nil {
		return nil, err
	}
	queued := make(map[string]bool, len(items))
	for _, g := range items {
		queued[g.Object] = true
	}
	return queued, nil
}

func sortObjects(o []wire.FsckObject) {
	sort.Slice(o, func(i, j int) bool {
		if o[i].Server != o[j].Server {
			return o[i].Server < o[j].Server
		}
		return o[i].Object < o[j].Object
	})
}
