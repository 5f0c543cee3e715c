package catalog_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/catalog"
)

// TestLongestPath: a file whose path is shoal.MaxPathLen bytes long (its
// key then spans SQLite's index overflow pages, schema version 10) is
// created, found, refused a second create-only PUT, listed and removed,
// on both engines.
func TestLongestPath(t *testing.T) {
	for name, open := range map[string]func(testing.TB) *catalog.DB{"sqlite": openSQLite, "mariadb": openMariaDB} {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			dir := ""
			for len(dir) < shoal.MaxPathLen-2*shoal.MaxNameLen {
				dir += "/" + strings.Repeat("d", shoal.MaxNameLen)
				if _, err := db.Mkdir(ctx, dir, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			f := dir + "/" + strings.Repeat("f", shoal.MaxPathLen-len(dir)-1)
			put := func(data string) error {
				_, err := db.PutInline(ctx, f, []byte(data), shoal.Sums{}, time.Now(), shoal.Condition{CreateOnly: true}, time.Time{})
				return err
			}
			if err := put("x"); err != nil {
				t.Fatalf("create of a %d-byte path: %v", len(f), err)
			}
			if e, err := db.Stat(ctx, f); err != nil || string(e.Inline) != "x" {
				t.Fatalf("Stat = %+v, %v", e, err)
			}
			if err := put("y"); !shoal.IsKind(err, shoal.KindPrecondition) {
				t.Errorf("second create-only PUT: %v, want KindPrecondition", err)
			}
			if ls, err := db.List(ctx, dir); err != nil || len(ls) != 1 || ls[0].Path != f {
				t.Errorf("List = %v, %v", ls, err)
			}
			if err := db.Remove(ctx, f, time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Stat(ctx, f); !shoal.IsKind(err, shoal.KindNotFound) {
				t.Errorf("Stat after Remove: %v, want KindNotFound", err)
			}
		})
	}
}
