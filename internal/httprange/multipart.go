package httprange

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"strings"
)

// Multipart returns a multipart/byteranges body (RFC 7233 appendix A) of
// the ranges rs of src, a body of size bytes whose parts have Content-Type
// partType; its exact length, for Content-Length; and the Content-Type of
// the whole answer. Parts are read from src as the body is read.
func Multipart(src io.ReaderAt, rs []Range, size int64, partType string) (body io.Reader, length int64, contentType string) {
	b := make([]byte, 12)
	rand.Read(b)
	boundary := hex.EncodeToString(b)
	parts := make([]io.Reader, 0, 2*len(rs)+1)
	for i, r := range rs {
		var head strings.Builder
		if i > 0 {
			head.WriteString("\r\n")
		}
		head.WriteString("--" + boundary + "\r\n")
		head.WriteString("Content-Type: " + partType + "\r\n")
		head.WriteString("Content-Range: " + ContentRange(r, size) + "\r\n\r\n")
		parts = append(parts, strings.NewReader(head.String()), io.NewSectionReader(src, r.Start, r.Length()))
		length += int64(head.Len()) + r.Length()
	}
	tail := "\r\n--" + boundary + "--\r\n"
	parts = append(parts, strings.NewReader(tail))
	length += int64(len(tail))
	return io.MultiReader(parts...), length, "multipart/byteranges; boundary=" + boundary
}
