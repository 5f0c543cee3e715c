package remote

import "testing"

func TestTotalSize(t *testing.T) {
	for _, c := range []struct {
		cr   string
		n    int64
		size int64
		ok   bool
	}{
		{"bytes 0-99/100", 100, 100, true},
		{"bytes 0-99/5000", 100, 5000, true},
		{"bytes 0-99/50", 100, 0, false},  // size below the bytes sent
		{"bytes 0-98/100", 100, 0, false}, // not the bytes sent
		{"bytes 1-100/200", 100, 0, false},
		{"bytes 0-99/*", 100, 0, false},
		{"", 0, 0, false},
	} {
		size, ok := totalSize(c.cr, c.n)
		if size != c.size || ok != c.ok {
			t.Errorf("totalSize(%q, %d) = %d, %v; want %d, %v", c.cr, c.n, size, ok, c.size, c.ok)
		}
	}
}
