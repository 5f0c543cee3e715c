package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/cobra"
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/cache/memcache"
)

// The backend ceilings are what a metadata server could at best answer
// per second on this box when every HEAD costs one backend lookup and
// nothing else: a bare fasthttp handler doing one memcached get (the
// ceiling of md's memcached hit), or one primary-key SELECT on the
// catalog's entries table (the ceiling of md's SQL-only stat). md does
// more per request (path cleaning, generations, decoding, headers), so
// its ratio to these says how much of the backend's rate it keeps.

// ceilingKey is the memcached key the memcached ceiling reads.
const ceilingKey = "shoal-bench-ceiling"

// MemcachedCeilingHandler answers HEAD with one memcached get of one key
// per request (cache/memcache's GetInto, md's read path): 200 with the
// value's length as Content-Length, 503 if memcached failed. Other
// methods are 405.
func MemcachedCeilingHandler(c *memcache.Cache) fasthttp.RequestHandler {
	keys := []string{ceilingKey}
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsHead() {
			ctx.SetStatusCode(405)
			return
		}
		var vals [1][]byte
		if err := c.GetInto(context.Background(), keys, vals[:]); err != nil || vals[0] == nil {
			ctx.SetStatusCode(503)
			return
		}
		ctx.Response.Header.SetContentTypeBytes(octetStream)
		ctx.Response.Header.SetContentLength(len(vals[0]))
		ctx.Response.SkipBody = true
	}
}

// SQLCeilingHandler answers HEAD with one primary-key SELECT on the
// catalog's entries table per request, cycling over ids 1…maxID: 200 with
// the entry's size as Content-Length, 404 for an id with no row, 503 if
// the query failed. Other methods are 405.
func SQLCeilingHandler(db *sql.DB, maxID int64) fasthttp.RequestHandler {
	var next atomic.Int64
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsHead() {
			ctx.SetStatusCode(405)
			return
		}
		id := next.Add(1)%maxID + 1
		var size int64
		err := db.QueryRowContext(context.Background(), `SELECT size FROM entries WHERE id = ?`, id).Scan(&size)
		switch {
		case err == sql.ErrNoRows:
			ctx.SetStatusCode(404)
			return
		case err != nil:
			ctx.SetStatusCode(503)
			return
		}
		ctx.Response.Header.SetContentTypeBytes(octetStream)
		ctx.Response.Header.SetContentLength(int(size))
		ctx.Response.SkipBody = true
	}
}

// openCeilingSQL opens a mysql:// catalog DSN the way the catalog does
// for md (client-side interpolation: one round trip per query, READ
// COMMITTED is irrelevant to a single SELECT) with conns connections,
// and returns the largest entry id.
func openCeilingSQL(dsn string, conns int) (*sql.DB, int64, error) {
	const op = "bench ceiling"
	rest, ok := strings.CutPrefix(dsn, "mysql://")
	at := strings.LastIndexByte(rest, '@')
	slash := strings.IndexByte(rest[at+1:], '/')
	if !ok || at < 0 || slash < 0 {
		return nil, 0, shoal.Errorf(op, shoal.KindInvalid, "--catalog: want mysql://USER:PASS@HOST:PORT/DB")
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, _ = strings.Cut(rest[:at], ":")
	cfg.Net, cfg.Addr = "tcp", rest[at+1:at+1+slash]
	cfg.DBName = rest[at+1+slash+1:]
	cfg.InterpolateParams = true
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, 0, shoal.E(op, shoal.KindInvalid, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var maxID sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT MAX(id) FROM entries`).Scan(&maxID); err != nil {
		db.Close()
		return nil, 0, shoal.E(op, shoal.KindUnavailable, err)
	}
	if maxID.Int64 < 1 {
		db.Close()
		return nil, 0, shoal.Errorf(op, shoal.KindInvalid, "the catalog has no entries: populate it first")
	}
	return db, maxID.Int64, nil
}

// ceilingBackend holds the ceiling command's backend flags.
type ceilingBackend struct {
	backend, memcached, catalog, dir string
	conns                            int
}

func (b *ceilingBackend) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&b.backend, "backend", "none", "none (constant answers), memcached (one get per HEAD), sql (one primary-key SELECT per HEAD) or disk (every PUT a durable file of its own)")
	fs.StringVar(&b.memcached, "memcached", "127.0.0.1:11211", "with --backend memcached: HOST:PORT")
	fs.StringVar(&b.catalog, "catalog", "", "with --backend sql: the catalog DSN, mysql://USER:PASS@HOST:PORT/DB")
	fs.StringVar(&b.dir, "dir", "", "with --backend disk: the directory PUT bodies become files in (made if missing)")
	fs.IntVar(&b.conns, "sql-conns", 16, "with --backend sql: connection pool size (md's default catalog.max_open_conns)")
}

// server returns the ceiling server for the chosen backend, what it does
// (for the banner), and a function that releases the backend.
func (b *ceilingBackend) server(body int) (*fasthttp.Server, string, func(), error) {
	srv := NewCeilingServer(body)
	switch b.backend {
	case "none", "":
		return srv, fmt.Sprintf("GET/HEAD: %d-byte body", body), func() {}, nil
	case "memcached":
		c, err := memcache.New(memcache.Options{Servers: []string{b.memcached}})
		if err != nil {
			return nil, "", nil, err
		}
		if err := c.Set(context.Background(), ceilingKey, make([]byte, 100), 0); err != nil {
			c.Close()
			return nil, "", nil, err
		}
		srv.Handler = MemcachedCeilingHandler(c)
		return srv, "HEAD: one memcached get of a 100-byte value at " + b.memcached, func() { c.Close() }, nil
	case "sql":
		db, maxID, err := openCeilingSQL(b.catalog, b.conns)
		if err != nil {
			return nil, "", nil, err
		}
		srv.Handler = SQLCeilingHandler(db, maxID)
		return srv, fmt.Sprintf("HEAD: one primary-key SELECT over %d entries", maxID), func() { db.Close() }, nil
	case "disk":
		if b.dir == "" {
			return nil, "", nil, shoal.Errorf("bench ceiling", shoal.KindInvalid, "--backend disk needs --dir")
		}
		if err := os.MkdirAll(b.dir, 0o755); err != nil {
			return nil, "", nil, shoal.E("bench ceiling", b.dir, err)
		}
		srv.Handler = DiskCeilingHandler(b.dir)
		return srv, "PUT: the body a new file in " + b.dir + ", fsync'd, then its directory fsync'd", func() {}, nil
	}
	return nil, "", nil, shoal.Errorf("bench ceiling", shoal.KindInvalid, "--backend %q: want none, memcached, sql or disk", b.backend)
}
