package catalog

// Schema version 9: large tree operations (see treeops.go). tree_ops has
// a row per root of an operation in progress: its source (busy, still
// visible), the copy being built (busy, hidden) or a tree being removed
// (busy, hidden). entries.tree_op marks those roots' entry rows with the
// operation's id, so that every write, which reads the rows of its
// path's ancestors anyway (lockTree), sees that it must wait.
var (
	mysqlTreeOpsV9 = []string{
		`CREATE TABLE tree_ops (
			id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
			op BIGINT NOT NULL,
			role VARBINARY(16) NOT NULL,
			path VARBINARY(4096) NOT NULL,
			path_hash BINARY(16) NOT NULL,
			hidden TINYINT(1) NOT NULL,
			top_id BIGINT NOT NULL,
			grace_ns BIGINT NOT NULL,
			owner VARBINARY(64) NOT NULL,
			lease_until_ns BIGINT NOT NULL,
			KEY tree_ops_op (op),
			KEY tree_ops_hash (path_hash)
		) ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=binary`,
		`ALTER TABLE entries ADD COLUMN tree_op BIGINT NOT NULL DEFAULT 0`,
	}
	sqliteTreeOpsV9 = []string{
		`CREATE TABLE tree_ops (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			op INTEGER NOT NULL,
			role TEXT NOT NULL,
			path TEXT NOT NULL,
			path_hash BLOB NOT NULL,
			hidden INTEGER NOT NULL,
			top_id INTEGER NOT NULL,
			grace_ns INTEGER NOT NULL,
			owner TEXT NOT NULL,
			lease_until_ns INTEGER NOT NULL
		)`,
		`CREATE INDEX tree_ops_op ON tree_ops (op)`,
		`CREATE INDEX tree_ops_hash ON tree_ops (path_hash)`,
		`ALTER TABLE entries ADD COLUMN tree_op INTEGER NOT NULL DEFAULT 0`,
	}
)
