//go:build !race

package catalog_test

const raceEnabled = false
