package catalog

import (
	"context"
	"time"

	"shoal"
)

// listCols are what a listing shows of an entry. Each column costs the
// SQLite driver a few calls per row, so a page reads neither content nor
// checksums, layout or replicas; the path is the directory's joined with
// the name.
const listCols = `id, name, is_dir, size, mtime_ns, ctime_ns, version`

// ListPage implements shoal.PageLister over the (parent_id, name) index:
// one range read per page, and one more for the page's properties.
func (db *DB) ListPage(ctx context.Context, dir, after string, limit int, props bool) (shoal.Page, error) {
	const op = "catalog.ListPage"
	if limit < 1 {
		return shoal.Page{}, shoal.Errorf(op, shoal.KindInvalid, "page limit %d", limit)
	}
	d, err := db.Stat(ctx, dir)
	if err != nil {
		return shoal.Page{}, shoal.E(op, dir, err)
	}
	if !d.IsDir {
		return shoal.Page{}, shoal.E(op, dir, shoal.KindNotDir)
	}
	db.trips.Add(1)
	// One row more than asked tells whether another page follows.
	rows, err := db.query(ctx, `SELECT `+listCols+` FROM entries WHERE parent_id = ? AND name > ? ORDER BY name LIMIT ?`,
		d.ID, after, limit+1)
	if err != nil {
		return shoal.Page{}, db.fail(op, dir, err)
	}
	es, err := scanListRows(rows, d, limit+1)
	if err != nil {
		return shoal.Page{}, db.fail(op, dir, err)
	}
	p := shoal.Page{Entries: es}
	if len(es) > limit {
		p.Entries, p.More = es[:limit], true
	}
	if props {
		if p.Props, err = db.pageProps(ctx, d.ID, after, p.Entries); err != nil {
			return shoal.Page{}, db.fail(op, dir, err)
		}
	}
	return p, nil
}

// scanListRows reads rows of listCols, children of d, into entries
// allocated together (one allocation per page, not per row).
func scanListRows(rows rowSet, d *shoal.Entry, max int) ([]*shoal.Entry, error) {
	defer rows.Close()
	slab := make([]shoal.Entry, 0, max)
	var out []*shoal.Entry
	for rows.Next() {
		if len(slab) == cap(slab) {
			slab = make([]shoal.Entry, 0, max)
		}
		slab = slab[:len(slab)+1]
		e := &slab[len(slab)-1]
		var name string
		var mtime, ctime int64
		if err := rows.Scan(&e.ID, &name, &e.IsDir, &e.Size, &mtime, &ctime, &e.Version); err != nil {
			return nil, err
		}
		e.Parent = d.ID
		e.Path = shoal.JoinPath(d.Path, name)
		e.MTime = time.Unix(0, mtime)
		e.CTime = time.Unix(0, ctime)
		out = append(out, e)
	}
	return out, rows.Err()
}

// pageProps reads the dead properties of a page's entries (the children
// of parent named after after, up to the last of es) in one query, rows
// in the entries' order.
func (db *DB) pageProps(ctx context.Context, parent int64, after string, es []*shoal.Entry) ([][]shoal.Prop, error) {
	out := make([][]shoal.Prop, len(es))
	if len(es) == 0 {
		return out, nil
	}
	db.trips.Add(1)
	rows, err := db.query(ctx, `SELECT e.name, p.space, p.name, p.value FROM entries e JOIN props p ON p.entry_id = e.id
		WHERE e.parent_id = ? AND e.name > ? AND e.name <= ? ORDER BY e.name, p.space, p.name`,
		parent, after, es[len(es)-1].Name())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var name string
		var p shoal.Prop
		if err := rows.Scan(&name, &p.Space, &p.Name, &p.Value); err != nil {
			return nil, err
		}
		for i < len(es) && es[i].Name() < name {
			i++
		}
		if i < len(es) && es[i].Name() == name {
			out[i] = append(out[i], p)
		}
	}
	return out, rows.Err()
}
