package dav

import (
	"bytes"
	"encoding/xml"
	"sync"

	"shoal"
)

// PROPFIND request kinds (RFC 4918 14.20).
const (
	findAllProp = iota
	findPropName
	findProp
)

// Propfind is a parsed PROPFIND body. The ones ParsePropfind returns are
// shared and must not be modified.
type Propfind struct {
	kind    int
	names   []xml.Name // findProp: the requested properties
	include []xml.Name // findAllProp: <include> extras
}

// parsePropfind parses a PROPFIND body; an empty body means allprop.
func parsePropfind(body []byte) (*Propfind, error) {
	const op = "PROPFIND"
	r := &Propfind{kind: findAllProp}
	if len(bytes.TrimSpace(body)) == 0 {
		return r, nil
	}
	d, err := openDAVBody(op, body, "propfind")
	if err != nil {
		return nil, err
	}
	seen := false
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, xmlErr(op, err)
		}
		switch t := tok.(type) {
		case xml.EndElement: // </propfind>
			if !seen {
				return nil, shoal.Errorf(op, shoal.KindInvalid, "propfind needs allprop, propname or prop")
			}
			return r, trailing(d, op)
		case xml.StartElement:
			if t.Name.Space != nsDAV {
				if err := d.Skip(); err != nil {
					return nil, xmlErr(op, err)
				}
				continue
			}
			switch t.Name.Local {
			case "allprop":
				r.kind, seen = findAllProp, true
				err = d.Skip()
			case "propname":
				r.kind, seen = findPropName, true
				err = d.Skip()
			case "prop":
				r.kind, seen = findProp, true
				r.names, err = childNames(d, r.names)
			case "include":
				r.include, err = childNames(d, r.include)
			default:
				err = d.Skip()
			}
			if err != nil {
				return nil, xmlErr(op, err)
			}
		}
	}
}

// allProp is the request of a PROPFIND without a body (RFC 4918 9.1:
// allprop).
var allProp = &Propfind{kind: findAllProp}

// NeedsDead reports whether answering r needs the entry's dead
// properties (a catalog query).
func (r *Propfind) NeedsDead() bool {
	if r.kind != findProp {
		return true
	}
	for _, n := range r.names {
		if !isLive(n) {
			return true
		}
	}
	return false
}

// Clients send the same few PROPFIND bodies over and over. They are read
// by recognizePropfind, a byte scanner for the shapes clients use, and
// only the rest by encoding/xml (which costs more than the rest of the
// request); either way the result is remembered (a bounded set: bodies
// come from clients), so a repeated body costs a map lookup.
const (
	propfindCacheMax     = 256
	propfindCacheBodyMax = 4096
)

var (
	propfindMu    sync.RWMutex
	propfindCache = map[string]*Propfind{}
)

// ParsePropfind parses a PROPFIND body (allProp when empty), through the
// fast path and the memo. KindInvalid when malformed. The returned
// request is shared and must not be modified.
func ParsePropfind(body []byte) (*Propfind, error) {
	if len(body) == 0 {
		return allProp, nil
	}
	if len(body) > propfindCacheBodyMax {
		return parsePropfindFast(body)
	}
	propfindMu.RLock()
	req, ok := propfindCache[b2s(body)]
	propfindMu.RUnlock()
	if ok {
		return req, nil
	}
	req, err := parsePropfindFast(body)
	if err != nil {
		return nil, err
	}
	propfindMu.Lock()
	if len(propfindCache) < propfindCacheMax {
		propfindCache[string(body)] = req
	}
	propfindMu.Unlock()
	return req, nil
}

// parsePropfindFast is parsePropfind, through recognizePropfind when the
// body is one of the common shapes.
func parsePropfindFast(body []byte) (*Propfind, error) {
	if req, ok := recognizePropfind(body); ok {
		return req, nil
	}
	return parsePropfind(body)
}
