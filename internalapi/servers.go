package internalapi

import (
	"encoding/json"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

// jobsScanned bounds the listing searched for a drain still under way:
// the newest jobs, which a queued or running one is among unless
// thousands were created after it.
const jobsScanned = 1000

// serveServers serves the server-state endpoints; false if path is not one.
func (a *API) serveServers(ctx *fasthttp.RequestCtx, path string, body []byte) bool {
	switch path {
	case wire.PathAdminServerActivate:
		var req wire.ServerRequest
		err := decode(body, &req)
		var sv *shoal.Server
		if err == nil {
			sv, err = a.activate(req.Server)
		}
		answer(ctx, sv, err)
	default:
		return false
	}
	return true
}

// activate puts server id back to active: the undo of a drain that did
// not end (stalled, failed or cancelled), which leaves the server
// draining, taking no new writes, so that a pool as wide as its layout
// (ec:2+1 on 3 servers) refuses every write. Refused for an unknown
// server, a retired one (its drain finished: the catalog names nothing on
// it and its garbage loop is emptying it), and one a drain job is still
// draining (that job would go on moving files off it and retire it).
func (a *API) activate(id string) (*shoal.Server, error) {
	const op = "internal.activate"
	if id == "" {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "no server named")
	}
	servers, err := a.cat.Servers(a.base)
	if err != nil {
		return nil, err
	}
	var sv *shoal.Server
	for i := range servers {
		if servers[i].ID == id {
			sv = &servers[i]
		}
	}
	switch {
	case sv == nil:
		return nil, shoal.Errorf(op, shoal.KindNotFound, "no server %q (shoal admin servers lists them)", id)
	case sv.State == shoal.ServerRetired:
		return nil, shoal.Errorf(op, shoal.KindConflict, "server %s is retired: a drain moved everything off it and its disks are being emptied; it takes no data again under this id (to use its disks again, run it under a new one: disk.id, or remove the data directory's server-id once it is empty)", id)
	case sv.State == shoal.ServerActive:
		return sv, nil
	}
	jobs, err := a.cat.Jobs(a.base, jobsScanned)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		var args wire.DrainRequest
		if j.Kind != wire.JobDrain || j.State.Finished() || json.Unmarshal(j.Args, &args) != nil || args.Server != id {
			continue
		}
		return nil, shoal.Errorf(op, shoal.KindConflict, "drain job %d of %s is %s: cancel it first (shoal admin job cancel %d)", j.ID, id, j.State, j.ID)
	}
	if err := a.cat.SetServerState(a.base, id, shoal.ServerActive); err != nil {
		return nil, err
	}
	// This md places writes on it at once; the others within their
	// placement lists' refresh.
	a.cfg.Placement.Invalidate()
	sv.State = shoal.ServerActive
	return sv, nil
}
