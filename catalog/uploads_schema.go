package catalog

// Schema version 4: an upload records the If-Match list its commit must
// find (comma-separated strong ETags, "*" for any existing file, "" for
// none), so that a conditional PUT is checked in the commit's transaction.
var (
	mysqlUploadsV4 = []string{
		`ALTER TABLE uploads ADD COLUMN if_match VARBINARY(1024) NOT NULL DEFAULT ''`,
	}
	sqliteUploadsV4 = []string{
		`ALTER TABLE uploads ADD COLUMN if_match TEXT NOT NULL DEFAULT ''`,
	}
)

// Schema version 6: an upload records who asked for it, so that md can
// bound the reservations one client holds (Upload.MaxPending).
var (
	mysqlUploadsV6 = []string{
		`ALTER TABLE uploads ADD COLUMN client VARBINARY(512) NOT NULL DEFAULT ''`,
		`CREATE INDEX uploads_client ON uploads (client, expires_ns)`,
	}
	sqliteUploadsV6 = []string{
		`ALTER TABLE uploads ADD COLUMN client TEXT NOT NULL DEFAULT ''`,
		`CREATE INDEX uploads_client ON uploads (client, expires_ns)`,
	}
)
