package metrics

import "context"

// DiskFullCollector writes shoal_disk_full: 1 while the data server can
// take no writes because every disk is down to its reserve (full says
// why, nil when not), else 0.
func DiskFullCollector(server string, full func() error) Collector {
	return CollectorFunc(func(w *Writer) {
		v := 0.0
		if full() != nil {
			v = 1
		}
		w.Gauge("shoal_disk_full", "1 when every disk of the data server is down to its reserve (writes get 507), 0 otherwise.", v, Label{"server", server})
	})
}

// CatalogSpaceCollector writes shoal_catalog_disk_full (1 while problem
// says the catalog's disk is full: a write refused for want of space and
// none succeeded since, or an SQLite catalog's filesystem nearly out of
// room) and, when space knows them (SQLite), the free and total bytes of
// the catalog's filesystem.
func CatalogSpaceCollector(problem func(context.Context) error, space func() (free, total int64, ok bool)) Collector {
	return CollectorFunc(func(w *Writer) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		v := 0.0
		if problem(ctx) != nil {
			v = 1
		}
		cancel()
		w.Gauge("shoal_catalog_disk_full", "1 when the catalog's disk is full (writes get 507), 0 otherwise.", v)
		if free, total, ok := space(); ok {
			w.Gauge("shoal_catalog_disk_free_bytes", "Bytes free on the filesystem of the SQLite catalog.", float64(free))
			w.Gauge("shoal_catalog_disk_total_bytes", "Bytes in all on the filesystem of the SQLite catalog.", float64(total))
		}
	})
}
