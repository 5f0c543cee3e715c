package gw

import (
	"fmt"

	"shoal"
	"shoal/ec"
	"shoal/internal/testcluster"
	"shoal/internal/testhttp"
)

var ec42 = shoal.Layout{Kind: shoal.LayoutEC, K: 4, M: 2}

// httpDo sends one request with net/http (see testhttp.Do).
var httpDo = testhttp.Do

var (
	shardFile = testcluster.ObjectFile
	flipBytes = testcluster.FlipBytes
	walkFiles = testcluster.WalkFiles
)

// The shard format's sizes, to corrupt a given chunk on disk.
const (
	headerSize = ec.HeaderSize
	crcSize    = ec.CRCSize
)

func idFor(i int) string { return fmt.Sprintf("%04x", 0xa000+i) }

// sizes are the file sizes every layout test writes, for a given stripe.
func sizes(stripe int) []int {
	return []int{0, 1, stripe - 1, stripe, stripe + 1, 5*stripe + 777}
}

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
