package dav

import (
	"bytes"
	"mime"
	"strings"
	"sync"
)

// Content types by extension, memoized: mime.TypeByExtension allocates.
var (
	mimeMu    sync.RWMutex
	mimeCache = map[string][]byte{}
	ctOctet   = []byte("application/octet-stream")
)

// ContentType is the media type of a file by its extension,
// application/octet-stream when unknown. The result is shared: it must
// not be modified.
func ContentType(path string) []byte {
	slash := strings.LastIndexByte(path, '/')
	dot := strings.LastIndexByte(path, '.')
	if dot <= slash || dot == len(path)-1 || len(path)-dot > 16 {
		return ctOctet
	}
	ext := path[dot:]
	mimeMu.RLock()
	v, ok := mimeCache[ext]
	mimeMu.RUnlock()
	if ok {
		return v
	}
	v = ctOctet
	if t := mime.TypeByExtension(ext); t != "" {
		v = []byte(t)
	}
	mimeMu.Lock()
	if len(mimeCache) < 4096 { // bounded: extensions come from users
		mimeCache[strings.Clone(ext)] = v
	}
	mimeMu.Unlock()
	return v
}

// IsActive reports whether a browser would execute content of type ct
// (HTML, SVG, XHTML, JavaScript): stored files of such a type are served
// in a sandbox or as downloads.
func IsActive(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	for _, a := range activeTypes {
		if bytes.EqualFold(ct, a) {
			return true
		}
	}
	return false
}

var activeTypes = [][]byte{
	[]byte("text/html"), []byte("application/xhtml+xml"), []byte("image/svg+xml"), []byte("text/xml"),
	[]byte("application/xml"), []byte("text/javascript"), []byte("application/javascript"),
	[]byte("application/ecmascript"), []byte("text/ecmascript"),
}
