package catalog

import (
	"context"
	"time"

	"shoal"
)

// PutServer registers s or refreshes its URL, pool, space and heartbeat.
// The state is set only when the server is new: operators change it with
// SetServerState, and heartbeats must not undo that.
func (db *DB) PutServer(ctx context.Context, s *shoal.Server) error {
	const op = "catalog.PutServer"
	if s.ID == "" {
		return shoal.Errorf(op, shoal.KindInvalid, "server without an ID")
	}
	state, pool := s.State, s.Pool
	if state == "" {
		state = shoal.ServerActive
	}
	if !validState(state) {
		return shoal.Errorf(op, shoal.KindInvalid, "unknown server state %q", state)
	}
	if pool == "" {
		pool = "default"
	}
	seen := s.LastSeen
	if seen.IsZero() {
		seen = time.Now()
	}
	return db.inTx(ctx, op, s.ID, func(t *tx) error {
		_, err := t.exec(ctx, db.d.upsertServer(), s.ID, s.URL, pool, string(state), s.Free, s.Total, seen.UnixNano())
		return err
	})
}

func validState(s shoal.ServerState) bool {
	switch s {
	case shoal.ServerActive, shoal.ServerReadOnly, shoal.ServerDraining, shoal.ServerRetired:
		return true
	}
	return false
}

// Servers lists every server sorted by ID.
func (db *DB) Servers(ctx context.Context) ([]shoal.Server, error) {
	const op = "catalog.Servers"
	rows, err := db.query(ctx, `SELECT id, url, pool, state, free, total, last_seen_ns FROM servers ORDER BY id`)
	if err != nil {
		return nil, db.fail(op, "", err)
	}
	defer rows.Close()
	var out []shoal.Server
	for rows.Next() {
		var s shoal.Server
		var state string
		var seen int64
		if err := rows.Scan(&s.ID, &s.URL, &s.Pool, &state, &s.Free, &s.Total, &seen); err != nil {
			return nil, db.fail(op, "", err)
		}
		s.State = shoal.ServerState(state)
		s.LastSeen = time.Unix(0, seen)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail(op, "", err)
	}
	return out, nil
}

// SetServerState changes a server's state.
func (db *DB) SetServerState(ctx context.Context, id string, state shoal.ServerState) error {
	const op = "catalog.SetServerState"
	if !validState(state) {
		return shoal.Errorf(op, shoal.KindInvalid, "unknown server state %q", state)
	}
	return db.inTx(ctx, op, id, func(t *tx) error {
		var n int
		if err := t.queryRow(ctx, `SELECT COUNT(*) FROM servers WHERE id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return shoal.Errorf(op, shoal.KindNotFound, "no server %q", id)
		}
		_, err := t.exec(ctx, `UPDATE servers SET state = ? WHERE id = ?`, string(state), id)
		return err
	})
}
