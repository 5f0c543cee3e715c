package catalog

// Schema version 8: directory quotas. A quota is keyed by its directory's
// entry id, so it follows the directory through a MOVE; entries.quota
// marks the directories that have one, so that the ancestor lookup every
// write makes already (lockTree) finds the governing quotas at no extra
// cost, and a write under no quota pays nothing. An upload records what
// it reserved and on which quota directories (",ID,ID,"), so that its
// commit or expiry gives back exactly that.
var (
	mysqlQuotasV8 = []string{
		`CREATE TABLE quotas (
			dir_id BIGINT NOT NULL PRIMARY KEY,
			bytes_limit BIGINT NOT NULL,
			files_limit BIGINT NOT NULL,
			used_bytes BIGINT NOT NULL,
			used_files BIGINT NOT NULL,
			reserved BIGINT NOT NULL
		) ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=binary`,
		`ALTER TABLE entries ADD COLUMN quota TINYINT(1) NOT NULL DEFAULT 0`,
		`ALTER TABLE uploads ADD COLUMN reserved BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE uploads ADD COLUMN quota_dirs VARBINARY(4096) NOT NULL DEFAULT ''`,
	}
	sqliteQuotasV8 = []string{
		`CREATE TABLE quotas (
			dir_id INTEGER PRIMARY KEY,
			bytes_limit INTEGER NOT NULL,
			files_limit INTEGER NOT NULL,
			used_bytes INTEGER NOT NULL,
			used_files INTEGER NOT NULL,
			reserved INTEGER NOT NULL
		)`,
		`ALTER TABLE entries ADD COLUMN quota INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE uploads ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE uploads ADD COLUMN quota_dirs TEXT NOT NULL DEFAULT ''`,
	}
)
