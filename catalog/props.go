package catalog

import (
	"context"
	"database/sql"

	"shoal"
)

// Props returns path's dead properties sorted by namespace and name, in
// one query (the entry joined with its properties).
func (db *DB) Props(ctx context.Context, path string) ([]shoal.Prop, error) {
	const op = "catalog.Props"
	rows, err := db.query(ctx, `SELECT e.path, p.space, p.name, p.value FROM entries e
		LEFT JOIN props p ON p.entry_id = e.id WHERE `+db.key.eq+` ORDER BY p.space, p.name`, db.key.of(path))
	if err != nil {
		return nil, db.fail(op, path, err)
	}
	defer rows.Close()
	found := false
	var out []shoal.Prop
	for rows.Next() {
		var p string
		var space, name, value sql.NullString
		if err := rows.Scan(&p, &space, &name, &value); err != nil {
			return nil, db.fail(op, path, err)
		}
		if p != path {
			continue
		}
		found = true
		if space.Valid {
			out = append(out, shoal.Prop{Space: space.String, Name: name.String, Value: value.String})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail(op, path, err)
	}
	if !found {
		return nil, db.missing(ctx, op, path)
	}
	return out, nil
}

// PatchProps sets and removes properties in one transaction.
func (db *DB) PatchProps(ctx context.Context, path string, set []shoal.Prop, remove []shoal.Prop) error {
	const op = "catalog.PatchProps"
	for _, p := range append(append([]shoal.Prop(nil), set...), remove...) {
		if p.Name == "" {
			return shoal.Errorf(op, shoal.KindInvalid, "property without a name")
		}
	}
	return db.inTx(ctx, op, path, func(t *tx) error {
		n, _, err := t.lockTree(ctx, path)
		if err != nil {
			return err
		}
		if n == nil {
			return shoal.E(op, path, shoal.KindNotFound)
		}
		for _, p := range remove {
			if _, err := t.exec(ctx, `DELETE FROM props WHERE entry_id = ? AND space = ? AND name = ?`, n.id, p.Space, p.Name); err != nil {
				return err
			}
		}
		for _, p := range set {
			if _, err := t.exec(ctx, `REPLACE INTO props (entry_id, space, name, value) VALUES (?, ?, ?, ?)`,
				n.id, p.Space, p.Name, p.Value); err != nil {
				return err
			}
		}
		return nil
	})
}
