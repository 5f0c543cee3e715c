package catalog

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"shoal"
)

// mysqlDialect is the shared catalog on MySQL/MariaDB (InnoDB). Write
// transactions run at READ COMMITTED with locking reads on the ancestors
// of every path they change (see lockTree), so that concurrent md
// processes serialise exactly where their paths overlap.
type mysqlDialect struct{}

func (mysqlDialect) name() string { return "mysql" }

func (mysqlDialect) defaultConns() int { return DefaultMaxOpenConns }

// dialTimeout bounds connecting to the MySQL server.
const dialTimeout = 5 * time.Second

// parseMySQLDSN reads "USER:PASS@HOST:PORT/DB[?socket=PATH]" or
// "USER:PASS@unix(PATH)/DB" (the part after "mysql://").
func parseMySQLDSN(target string) (*mysql.Config, error) {
	bad := func(why string) (*mysql.Config, error) {
		return nil, shoal.Errorf("catalog.Open", shoal.KindInvalid,
			"mysql DSN: %s (want mysql://USER:PASS@HOST:PORT/DB or mysql://USER:PASS@unix(/path.sock)/DB)", why)
	}
	rest, query, _ := strings.Cut(target, "?")
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return bad("missing USER@")
	}
	userinfo, hostdb := rest[:at], rest[at+1:]
	cfg := mysql.NewConfig()
	user, pass, _ := strings.Cut(userinfo, ":")
	var err error
	if cfg.User, err = url.PathUnescape(user); err != nil || cfg.User == "" {
		return bad("bad or empty user")
	}
	if cfg.Passwd, err = url.PathUnescape(pass); err != nil {
		return bad("bad password escape")
	}
	if strings.HasPrefix(hostdb, "unix(") {
		end := strings.IndexByte(hostdb, ')')
		if end < 0 {
			return bad("unclosed unix(")
		}
		cfg.Net, cfg.Addr, hostdb = "unix", hostdb[len("unix("):end], hostdb[end+1:]
		hostdb = "x" + hostdb // keep the "/DB" split below uniform
	}
	host, db, ok := strings.Cut(hostdb, "/")
	if !ok || db == "" {
		return bad("missing /DB")
	}
	cfg.DBName = db
	if cfg.Net == "" {
		if host == "" {
			return bad("missing HOST:PORT")
		}
		cfg.Net, cfg.Addr = "tcp", host
		if !strings.Contains(host, ":") {
			cfg.Addr = host + ":3306"
		}
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return bad("bad query string")
	}
	for k, v := range q {
		switch k {
		case "socket":
			cfg.Net, cfg.Addr = "unix", v[0]
		default:
			return bad("unknown parameter " + k)
		}
	}
	// One round trip per statement: interpolate arguments client-side
	// instead of prepare+execute+close for every query.
	cfg.InterpolateParams = true
	cfg.ClientFoundRows = true
	// A host that drops packets must not hold a request for the kernel's
	// connect timeout (minutes): md answers 503 and the client retries.
	cfg.Timeout = dialTimeout
	return cfg, nil
}

func (mysqlDialect) open(ctx context.Context, target string, o Options) (read, write *sql.DB, err error) {
	cfg, err := parseMySQLDSN(target)
	if err != nil {
		return nil, nil, err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, shoal.Errorf("catalog.Open", shoal.KindInvalid, "mysql DSN: %v", err)
	}
	db := sql.OpenDB(readCommitted{conn})
	db.SetMaxOpenConns(o.MaxOpenConns)
	db.SetMaxIdleConns(o.MaxIdleConns)
	db.SetConnMaxLifetime(o.ConnMaxLifetime)
	// Bounded as every call (see DB.bounded): a server that accepts
	// connections but does not answer would hold md's start for ever.
	pctx, cancel := context.WithTimeout(ctx, o.CallTimeout)
	err = db.PingContext(pctx)
	cancel()
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, db, nil
}

func (mysqlDialect) lockSchema(ctx context.Context, conn *sql.Conn) (func(), error) {
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(CONCAT('shoal_schema.', DATABASE()), 120)`).Scan(&got); err != nil {
		return nil, err
	}
	if got.Int64 != 1 {
		return nil, shoal.Errorf("catalog.migrate", shoal.KindUnavailable, "timed out waiting for the schema lock")
	}
	return func() {
		conn.ExecContext(context.Background(), `DO RELEASE_LOCK(CONCAT('shoal_schema.', DATABASE()))`)
	}, nil
}

// writers: batches on several connections at once, so that one batch
// waiting for row locks (another md's) or the network does not hold up
// every write of this md.
func (mysqlDialect) writers(o Options) int { return max(1, min(o.WriteBatches, o.MaxOpenConns/2)) }

func (mysqlDialect) releaseSavepoints() bool { return false }

// lockOnDup: the update changes nothing (id stays id) and sets the
// statement's insert id to 0, which a new row never has (the affected-rows
// count cannot tell: ClientFoundRows makes it 1 both ways).
func (mysqlDialect) lockOnDup() string { return ` ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(0) + id` }

func (mysqlDialect) keyedByHash() bool { return true }

// deleteReturning: MariaDB has DELETE … RETURNING (since 10.0.5);
// MySQL has not.
func (mysqlDialect) deleteReturning(ctx context.Context, db *sql.DB) (bool, error) {
	var v string
	if err := db.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&v); err != nil {
		return false, err
	}
	return strings.Contains(v, "MariaDB"), nil
}

func (mysqlDialect) lockSuffix(exclusive bool) string {
	if exclusive {
		return " FOR UPDATE"
	}
	return " LOCK IN SHARE MODE"
}

func (mysqlDialect) upsertServer() string {
	return `INSERT INTO servers (id, url, pool, state, free, total, last_seen_ns) VALUES (?,?,?,?,?,?,?)
ON DUPLICATE KEY UPDATE url=VALUES(url), pool=VALUES(pool), free=VALUES(free), total=VALUES(total),
last_seen_ns=VALUES(last_seen_ns)`
}

func (mysqlDialect) classify(err error) errClass {
	if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn) {
		return errUnavailable
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return errOther
	}
	switch me.Number {
	case 1021, 1114: // ER_DISK_FULL, ER_RECORD_FILE_FULL ("The table is full")
		return errFull
	case 3, 1026, 1030: // errors writing a file, or of the storage engine: full if errno 28 (ENOSPC)
		if mentionsENOSPC(me.Message) {
			return errFull
		}
		return errOther
	case 1062, 1586: // ER_DUP_ENTRY, ER_DUP_ENTRY_WITH_KEY_NAME
		return errDuplicate
	case 1213, 1205: // deadlock, lock wait timeout
		return errRetry
	case 1040, 1053, 1290, 1927, 2002, 2003, 2006, 2013, 1836, 4031:
		// too many connections, shutdown, read-only, killed, gone away,
		// lost, read-only mode, idle disconnect
		return errUnavailable
	}
	return errOther
}

func (mysqlDialect) migrations() [][]string {
	const tail = ` ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=binary`
	return [][]string{{
		`CREATE TABLE entries (
			id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
			parent_id BIGINT NOT NULL,
			name VARBINARY(255) NOT NULL,
			path VARBINARY(4096) NOT NULL,
			path_hash BINARY(16) NOT NULL,
			is_dir TINYINT(1) NOT NULL,
			size BIGINT NOT NULL DEFAULT 0,
			mtime_ns BIGINT NOT NULL,
			ctime_ns BIGINT NOT NULL,
			version BIGINT NOT NULL DEFAULT 1,
			adler32 BIGINT NOT NULL DEFAULT 0,
			md5 VARBINARY(16),
			sha256 VARBINARY(32),
			inline MEDIUMBLOB,
			layout VARBINARY(32) NOT NULL DEFAULT '',
			UNIQUE KEY entries_path_hash (path_hash),
			UNIQUE KEY entries_parent_name (parent_id, name),
			KEY entries_path (path(255))
		)` + tail,
		`CREATE TABLE replicas (
			id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
			entry_id BIGINT NOT NULL,
			server VARBINARY(255) NOT NULL,
			object VARBINARY(64) NOT NULL,
			shard INT NOT NULL DEFAULT 0,
			size BIGINT NOT NULL DEFAULT 0,
			sum BIGINT NOT NULL DEFAULT 0,
			KEY replicas_entry (entry_id),
			KEY replicas_server_object (server, object),
			CONSTRAINT replicas_entry_fk FOREIGN KEY (entry_id) REFERENCES entries (id)
		)` + tail,
		`CREATE TABLE props (
			entry_id BIGINT NOT NULL,
			space VARBINARY(1024) NOT NULL,
			name VARBINARY(255) NOT NULL,
			value MEDIUMBLOB NOT NULL,
			PRIMARY KEY (entry_id, space, name),
			CONSTRAINT props_entry_fk FOREIGN KEY (entry_id) REFERENCES entries (id)
		)` + tail,
		`CREATE TABLE servers (
			id VARBINARY(255) NOT NULL PRIMARY KEY,
			url VARBINARY(2048) NOT NULL,
			pool VARBINARY(255) NOT NULL,
			state VARBINARY(16) NOT NULL,
			free BIGINT NOT NULL,
			total BIGINT NOT NULL,
			last_seen_ns BIGINT NOT NULL
		)` + tail,
		`CREATE TABLE pools (
			name VARBINARY(255) NOT NULL PRIMARY KEY,
			layout VARBINARY(32) NOT NULL
		)` + tail,
		`CREATE TABLE uploads (
			id VARBINARY(255) NOT NULL PRIMARY KEY,
			path VARBINARY(4096) NOT NULL,
			servers BLOB NOT NULL,
			object VARBINARY(64) NOT NULL,
			layout VARBINARY(32) NOT NULL,
			create_only TINYINT(1) NOT NULL,
			expires_ns BIGINT NOT NULL,
			KEY uploads_expires (expires_ns)
		)` + tail,
		`CREATE TABLE garbage (
			id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
			server VARBINARY(255) NOT NULL,
			object VARBINARY(64) NOT NULL,
			not_before_ns BIGINT NOT NULL,
			KEY garbage_server_due (server, not_before_ns)
		)` + tail,
	}, mysqlPoolsV2, mysqlReplicaListV3, mysqlUploadsV4, mysqlLocksV5, mysqlUploadsV6, mysqlJobsV7, mysqlQuotasV8, mysqlTreeOpsV9}
}

// mentionsENOSPC reports a MySQL/MariaDB error message that names errno
// 28 ("Errcode: 28", "errno: 28", "Got error 28 from storage engine") or
// its text.
func mentionsENOSPC(msg string) bool {
	for _, s := range []string{"Errcode: 28", "errno: 28", "error 28 ", "No space left"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// readCommitted sets each new connection's isolation level with a
// statement both MySQL and MariaDB know (the session variable's name
// differs between them), so transactions need no extra round trip.
type readCommitted struct{ driver.Connector }

func (c readCommitted) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("mysql driver connection cannot exec")
	}
	if _, err := ex.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", nil); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}
