package md

import (
	"context"
	"sort"

	"shoal"
)

// Report is what fsck found. OK is true when nothing is orphaned or
// missing and every server with data was reachable.
type Report struct {
	OK          bool            `json:"ok"`
	Servers     int             `json:"servers"`  // servers checked
	Replicas    int64           `json:"replicas"` // replicas the catalog names
	Objects     int64           `json:"objects"`  // objects found on disks
	Orphans     []FsckObject    `json:"orphans"`  // on disk, unknown to the catalog
	Missing     []FsckObject    `json:"missing"`  // in the catalog, absent on disk or of the wrong size
	Unreachable []FsckUnreached `json:"unreachable"`
}

// FsckObject is one object fsck reports.
type FsckObject struct {
	Server string `json:"server"`
	Object string `json:"object"`
	Path   string `json:"path,omitempty"` // an entry that references it (missing only)
	Size   int64  `json:"size"`           // on disk (orphans) or expected (missing)
	Found  int64  `json:"found,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// FsckUnreached is a server fsck could not list.
type FsckUnreached struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

// Fsck compares, for every non-retired server, the replicas the catalog
// names (Catalog.WalkReplicas) with the objects on the server's disks
// (store(server).Walk). Pending uploads' objects are not orphans. Objects
// listed after the catalog walk started may show as orphans if their
// upload committed meanwhile: run it twice before deleting anything.
func Fsck(ctx context.Context, cat shoal.Catalog, store func(shoal.Server) shoal.BlobStore) (Report, error) {
	rep := Report{Orphans: []FsckObject{}, Missing: []FsckObject{}, Unreachable: []FsckUnreached{}}
	servers, err := cat.Servers(ctx)
	if err != nil {
		return rep, err
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
	for _, sv := range servers {
		if sv.State == shoal.ServerRetired || sv.Pool == GatewayPool {
			continue // gws hold no data: their shards are on data servers
		}
		rep.Servers++
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
			return nil
		})
		if err != nil {
			return rep, err
		}
		onDisk := map[string]int64{}
		err = store(sv).Walk(ctx, func(o shoal.ObjectInfo) error {
			onDisk[o.ID] = o.Size
			return nil
		})
		if err != nil {
			rep.Unreachable = append(rep.Unreachable, FsckUnreached{Server: sv.ID, Error: shoal.Reason(err)})
			continue
		}
		rep.Objects += int64(len(onDisk))
		for id, size := range onDisk {
			if _, ok := expected[id]; !ok {
				rep.Orphans = append(rep.Orphans, FsckObject{Server: sv.ID, Object: id, Size: size})
			}
		}
		for id, w := range expected {
			if w.path == "" {
				continue // a pending upload: it may not have started
			}
			size, ok := onDisk[id]
			switch {
			case !ok:
				rep.Missing = append(rep.Missing, FsckObject{Server: sv.ID, Object: id, Path: w.path, Size: w.size, Reason: "not on disk"})
			case size != w.size:
				rep.Missing = append(rep.Missing, FsckObject{Server: sv.ID, Object: id, Path: w.path, Size: w.size, Found: size, Reason: "size mismatch"})
			}
		}
	}
	sortObjects(rep.Orphans)
	sortObjects(rep.Missing)
	rep.OK = len(rep.Orphans) == 0 && len(rep.Missing) == 0 && len(rep.Unreachable) == 0
	return rep, nil
}

func sortObjects(o []FsckObject) {
	sort.Slice(o, func(i, j int) bool {
		if o[i].Server != o[j].Server {
			return o[i].Server < o[j].Server
		}
		return o[i].Object < o[j].Object
	})
}
