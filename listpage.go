package shoal

import "context"

// PageLister lists a directory a page at a time, so that a listing can be
// sent while it is read, in bounded memory, whatever the directory's size
// (keyset pagination: each page starts after the last name of the one
// before, so no page costs more than its own rows).
type PageLister interface {
	// ListPage returns up to limit children of dir whose names sort after
	// after in byte order ("" starts at the first), sorted by name, and
	// whether more may follow (More is false once the last child has been
	// returned). An entry carries what a listing shows — ID, Parent, Path,
	// IsDir, Size, MTime, CTime, Version (so its ETag) — and no more: no
	// content (Inline is nil even for a file kept in the catalog), Sums,
	// Layout or Replicas, which cost a page of thousands of entries a
	// large part of its read. With props, Page.Props[i] holds the dead
	// properties of Entries[i] (sorted by namespace and name), read with
	// the page rather than one query per entry. KindNotFound if dir does
	// not exist, KindNotDir if it is a file, KindInvalid if limit < 1.
	//
	// Children created or removed between two pages are seen or not by
	// the later pages according to their names; no name is listed twice.
	ListPage(ctx context.Context, dir, after string, limit int, props bool) (Page, error)
}

// Page is one page of a directory listing (PageLister).
type Page struct {
	Entries []*Entry
	Props   [][]Prop // nil unless asked for; else one slice per entry
	More    bool     // more children may follow the last of Entries
}
