package gw

import (
	"crypto/md5"
	"fmt"
	"hash/adler32"
)

func idFor(i int) string { return fmt.Sprintf("%04x", 0xa000+i) }

// plain computes the reference sums of user bytes.
type plain struct{}

func (plain) sums(b []byte) (uint32, [16]byte, int) {
	return adler32.Checksum(b), md5.Sum(b), len(b)
}
