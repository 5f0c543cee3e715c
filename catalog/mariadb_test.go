package catalog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"shoal"
	"shoal/catalog"
	"shoal/catalog/catalogtest"
	"shoal/internal/testsvc"
)

func TestMain(m *testing.M) { testsvc.Main(m) }

func openMariaDB(t testing.TB) *catalog.DB {
	t.Helper()
	db, err := catalog.Open(context.Background(), catalog.Options{DSN: testsvc.MariaDB(t)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMariaDBConformance(t *testing.T) {
	catalogtest.Run(t, func(t *testing.T) shoal.Catalog {
		db := openMariaDB(t)
		if !db.DeleteReturning() {
			t.Fatal("MariaDB not recognised as having DELETE … RETURNING")
		}
		return checkedAtEnd(t, db)
	})
}

func TestMariaDBStatRoundTrips(t *testing.T) {
	testStatRoundTrips(t, openMariaDB(t))
}

// Several md processes opening one new MariaDB catalog at once apply the
// schema once (GET_LOCK) and all succeed.
func TestMariaDBConcurrentOpen(t *testing.T) {
	dsn := testsvc.MariaDB(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			db, err := catalog.Open(context.Background(), catalog.Options{DSN: dsn})
			if err == nil {
				_, err = db.Stat(context.Background(), "/")
				db.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent Open: %v", err)
		}
	}
}

// A catalog that cannot be reached is KindUnavailable (md: 503), and so is
// one that goes away under an open handle.
func TestMySQLUnavailable(t *testing.T) {
	port, err := testsvc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	_, err = catalog.Open(context.Background(), catalog.Options{DSN: fmt.Sprintf("mysql://u:p@127.0.0.1:%d/db", port)})
	if !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Errorf("Open of a closed port = %v, want KindUnavailable", err)
	}
}

func TestMySQLDSN(t *testing.T) {
	for _, dsn := range []string{"mysql://", "mysql://host/db", "mysql://u:p@host", "mysql://u:p@host/", "mysql://u:p@unix(/x/db", "mysql://u:p@h/db?bogus=1"} {
		_, err := catalog.Open(context.Background(), catalog.Options{DSN: dsn})
		if !shoal.IsKind(err, shoal.KindInvalid) {
			t.Errorf("Open(%q) = %v, want KindInvalid", dsn, err)
		}
	}
}

// testsvc's MariaDB runs with innodb_flush_log_at_trx_commit=1.
func TestMariaDBDurability(t *testing.T) {
	durable, how, err := openMariaDB(t).Durability(context.Background())
	if err != nil || !durable {
		t.Errorf("Durability = %v, %q, %v; want durable", durable, how, err)
	}
}

// A read that succeeded is not reported as cancelled because its
// deadline ended as its rows closed (database/sql may record that cancel
// as the rows' error; ClaimJob asks Err after Close). It was a CI flake
// of the Jobs conformance case, about 1 claim in a few hundred.
func TestMariaDBClaimAfterCloseNotCancelled(t *testing.T) {
	db := openMariaDB(t)
	ctx := context.Background()
	const n = 1000
	for range n {
		if _, err := db.CreateJob(ctx, &shoal.Job{Kind: "fsck"}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	for i := range n {
		if _, err := db.ClaimJob(ctx, "r", now, time.Hour); err != nil {
			t.Fatalf("claim %d of %d: %v", i+1, n, err)
		}
	}
}
