package dav

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"shoal"
)

// The WebDAV request headers md reads besides If (ifheader.go): Depth,
// Destination, Overwrite and Timeout (RFC 4918 §10), and the lock tokens
// it makes.

// DepthInfinity is the Depth "infinity", also that of a request without
// a Depth header.
const DepthInfinity = -1

// ParseDepth reads a Depth header: 0, 1 or DepthInfinity (also when it
// is missing); ok is false for anything else. Which depths a method takes
// is its own rule.
func ParseDepth(h []byte) (depth int, ok bool) {
	switch d := TrimSpace(h); {
	case len(d) == 0, EqualFold(d, "infinity"):
		return DepthInfinity, true
	case len(d) == 1 && d[0] == '0':
		return 0, true
	case len(d) == 1 && d[0] == '1':
		return 1, true
	}
	return 0, false
}

// ParseDestination reads the Destination header: an absolute URL or an
// absolute path, percent-decoded and cleaned like a request path. Its
// caller has made sure the URL names this server (a COPY naming another
// is a third-party copy, a MOVE to another 502), so its host is dropped
// here; the caller also refuses the paths it reserves.
func ParseDestination(h []byte) (string, error) {
	const op = "Destination"
	if len(h) == 0 {
		return "", shoal.Errorf(op, shoal.KindInvalid, "missing Destination header")
	}
	raw := h
	if raw[0] != '/' {
		i := indexString(raw, "://")
		if i <= 0 {
			return "", shoal.Errorf(op, shoal.KindInvalid, "Destination must be an absolute URL or path")
		}
		rest := raw[i+3:]
		j := indexByte(rest, '/')
		if j < 0 {
			rest = []byte("/")
		} else {
			rest = rest[j:]
		}
		raw = rest
	}
	if i := indexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	if i := indexByte(raw, '#'); i >= 0 {
		raw = raw[:i]
	}
	clean, _, err := shoal.CleanPath(string(raw))
	if err != nil {
		return "", shoal.E(op, shoal.KindOf(err), err)
	}
	return clean, nil
}

// ParseOverwrite reads the Overwrite header: T (default) or F.
func ParseOverwrite(h []byte) (bool, error) {
	switch {
	case len(h) == 0, EqualFold(h, "t"):
		return true, nil
	case EqualFold(h, "f"):
		return false, nil
	}
	return false, shoal.Errorf("Overwrite", shoal.KindInvalid, "Overwrite must be T or F")
}

// ParseTimeout reads "Second-N" or "Infinite" (the first of a list),
// capped at max; def without a usable value.
func ParseTimeout(h []byte, def, max time.Duration) time.Duration {
	v := strings.TrimSpace(strings.Split(string(h), ",")[0])
	if n, ok := strings.CutPrefix(v, "Second-"); ok {
		if sec, err := strconv.ParseInt(n, 10, 64); err == nil && sec > 0 {
			if sec < int64(max/time.Second) {
				return time.Duration(sec) * time.Second
			}
			return max
		}
	}
	if strings.EqualFold(v, "Infinite") {
		return max
	}
	return min(def, max)
}

// NewLockToken is a fresh opaquelocktoken URI (RFC 4918 §20.1).
func NewLockToken() string {
	var b [16]byte
	rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return "opaquelocktoken:" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
