package catalog

// Schema version 5: WebDAV locks, shared by every md over the catalog.
// lock_guard's one row serialises lock creation (under READ COMMITTED an
// absent conflicting row cannot be locked, so the check and the insert
// take this row first).
var (
	mysqlLocksV5 = []string{
		`CREATE TABLE locks (
			token VARBINARY(64) NOT NULL PRIMARY KEY,
			root VARBINARY(4096) NOT NULL,
			root_hash BINARY(16) NOT NULL,
			infinity TINYINT(1) NOT NULL,
			exclusive TINYINT(1) NOT NULL,
			owner MEDIUMBLOB NOT NULL,
			principal VARBINARY(512) NOT NULL,
			timeout_ns BIGINT NOT NULL,
			expires_ns BIGINT NOT NULL,
			KEY locks_root_hash (root_hash),
			KEY locks_root (root(255)),
			KEY locks_principal (principal),
			KEY locks_expires (expires_ns)
		) ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=binary`,
		`CREATE TABLE lock_guard (id INTEGER NOT NULL PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=binary`,
		`INSERT INTO lock_guard (id, n) VALUES (1, 0)`,
	}
	sqliteLocksV5 = []string{
		`CREATE TABLE locks (
			token TEXT NOT NULL PRIMARY KEY,
			root TEXT NOT NULL,
			root_hash BLOB NOT NULL,
			infinity INTEGER NOT NULL,
			exclusive INTEGER NOT NULL,
			owner TEXT NOT NULL,
			principal TEXT NOT NULL,
			timeout_ns INTEGER NOT NULL,
			expires_ns INTEGER NOT NULL
		)`,
		`CREATE INDEX locks_root_hash ON locks (root_hash)`,
		`CREATE INDEX locks_root ON locks (root)`,
		`CREATE INDEX locks_principal ON locks (principal)`,
		`CREATE INDEX locks_expires ON locks (expires_ns)`,
		`CREATE TABLE lock_guard (id INTEGER NOT NULL PRIMARY KEY, n INTEGER NOT NULL)`,
		`INSERT INTO lock_guard (id, n) VALUES (1, 0)`,
	}
)
