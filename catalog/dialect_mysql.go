package catalog

import (
	"context"
	"database/sql"
	"errors"

	"shoal"
)

// mysqlDialect is filled in below; until then MySQL DSNs are refused.
type mysqlDialect struct{}

func (mysqlDialect) name() string { return "mysql" }
func (mysqlDialect) open(ctx context.Context, target string, o Options) (*sql.DB, *sql.DB, error) {
	return nil, nil, shoal.Errorf("catalog.Open", shoal.KindUnsupported, "mysql dialect not built yet")
}
func (mysqlDialect) migrations() [][]string { return nil }
func (mysqlDialect) lockSchema(ctx context.Context, conn *sql.Conn) (func(), error) {
	return nil, errors.New("unsupported")
}
func (mysqlDialect) upsertServer() string        { return "" }
func (mysqlDialect) classify(err error) errClass { return errOther }
