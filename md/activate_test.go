package md

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/wire"
)

// TestActivateRefusedWhileDraining: a server a drain job is still to
// drain (queued here: no runner) cannot be put back to active — the job
// would go on and retire it — and the refusal names the job; once the
// job is cancelled it can, and the md that answered places a write on it
// at once. A gw-less md with one data server: while it drains, PUT is 507.
func TestActivateRefusedWhileDraining(t *testing.T) {
	e := streamEnv(t, 0, 0, true)
	cl := wire.NewClient(e.url, e.keys)
	var j shoal.Job
	if _, err := cl.Call(wire.PathAdminJobCreate, wire.JobRequest{Kind: wire.JobDrain, Args: json.RawMessage(`{"server":"ds1"}`)}, &j); err != nil {
		t.Fatal(err)
	}
	// What the drain does first when it runs.
	if err := e.db.SetServerState(t.Context(), "ds1", shoal.ServerDraining); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 300_000) // past the inline limit: needs a data server
	deadline := time.Now().Add(10 * time.Second)
	for e.put("/f", body).status != 507 {
		if time.Now().After(deadline) {
			t.Fatal("PUT with the only data server draining: not 507 within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}

	_, err := cl.Call(wire.PathAdminServerActivate, wire.ServerRequest{Server: "ds1"}, nil)
	if !shoal.IsKind(err, shoal.KindConflict) || !strings.Contains(err.Error(), "drain job") || !strings.Contains(err.Error(), "queued") {
		t.Fatalf("activate while a drain job is queued: %v, want a conflict naming the job", err)
	}
	if _, err := cl.Call(wire.PathAdminJobCancel, wire.JobID{ID: j.ID}, nil); err != nil {
		t.Fatal(err)
	}
	var sv shoal.Server
	if _, err := cl.Call(wire.PathAdminServerActivate, wire.ServerRequest{Server: "ds1"}, &sv); err != nil || sv.State != shoal.ServerActive {
		t.Fatalf("activate after the cancel: %+v, %v", sv, err)
	}
	e.put("/f", body).want(t, "PUT right after activate", 201, "")
	if _, err := cl.Call(wire.PathAdminServerActivate, wire.ServerRequest{Server: "nope"}, nil); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("activate of an unknown server: %v, want not found", err)
	}
}
