//go:build race

package catalog_test

// raceEnabled: the race detector slows the catalog 10 to 20 times; the
// large-tree tests use a smaller tree under it.
const raceEnabled = true
