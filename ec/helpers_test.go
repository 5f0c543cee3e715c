package ec

import (
	"crypto/md5"
	"fmt"
	"hash/adler32"

	"shoal/internal/testcluster"
)

func idFor(i int) string { return fmt.Sprintf("%04x", 0xa000+i) }

// plain computes the reference sums of user bytes.
type plain struct{}

func (plain) sums(b []byte) (uint32, [16]byte, int) {
	return adler32.Checksum(b), md5.Sum(b), len(b)
}

var (
	startCluster = testcluster.Start
	shardFile    = testcluster.ObjectFile
	flipBytes    = testcluster.FlipBytes
)

// pairs returns every pair of indices below n.
func pairs(n int) [][2]int {
	var out [][2]int
	for a := range n {
		for b := a + 1; b < n; b++ {
			out = append(out, [2]int{a, b})
		}
	}
	return out
}
