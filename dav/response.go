package dav

import (
	"encoding/xml"

	"shoal"
)

// AppendResponse appends one <D:response> of a PROPFIND req for e, whose
// dead properties are dead (read only when req.NeedsDead()).
func (lv *LiveProps) AppendResponse(b []byte, e *shoal.Entry, req *Propfind, dead []shoal.Prop) ([]byte, error) {
	b = append(b, "<D:response>"...)
	b = appendHref(b, e.Path, e.IsDir)
	switch req.kind {
	case findAllProp:
		b = appendPropstatOpen(b)
		for _, n := range allpropLive {
			b, _, _ = lv.appendLive(b, e, n)
		}
		for _, p := range dead {
			b = appendDead(b, &p)
		}
		var missingBuf [8]xml.Name // most requests miss a few: no allocation
		missing := missingBuf[:0]
		for _, n := range req.include {
			if isLive(n) && !isAllprop(n) {
				var ok bool
				var err error
				if b, ok, err = lv.appendLive(b, e, n); err != nil || !ok {
					missing = append(missing, n)
				}
			}
		}
		b = appendPropstatClose(b, 200)
		b = appendMissing(b, missing)
	case findPropName:
		b = appendPropstatOpen(b)
		names := propnameFileLive
		if e.IsDir {
			names = propnameDirLive
		}
		for _, n := range names {
			b = appendOpen(b, n, true)
		}
		for _, p := range dead {
			b = appendOpen(b, xml.Name{Space: p.Space, Local: p.Name}, true)
		}
		b = appendPropstatClose(b, 200)
	case findProp:
		var missingBuf [8]xml.Name // most requests miss a few: no allocation
		missing := missingBuf[:0]
		mark := len(b)
		b = appendPropstatOpen(b)
		found := false
		for _, n := range req.names {
			ok := false
			if isLive(n) {
				var err error
				if b, ok, err = lv.appendLive(b, e, n); err != nil {
					return b, err
				}
			} else {
				for i := range dead {
					if dead[i].Space == n.Space && dead[i].Name == n.Local {
						b = appendDead(b, &dead[i])
						ok = true
						break
					}
				}
			}
			if ok {
				found = true
			} else {
				missing = append(missing, n)
			}
		}
		if found {
			b = appendPropstatClose(b, 200)
		} else {
			b = b[:mark]
		}
		b = appendMissing(b, missing)
	}
	return append(b, "</D:response>"...), nil
}

func isAllprop(n xml.Name) bool {
	for _, a := range allpropLive {
		if a == n {
			return true
		}
	}
	return false
}

// appendDead appends a dead property with its stored value.
func appendDead(b []byte, p *shoal.Prop) []byte {
	n := xml.Name{Space: p.Space, Local: p.Name}
	if p.Value == "" {
		return appendOpen(b, n, true)
	}
	b = appendOpen(b, n, false)
	b = append(b, p.Value...)
	return appendClose(b, n)
}

// appendMissing appends a 404 propstat for properties the entry lacks.
func appendMissing(b []byte, missing []xml.Name) []byte {
	if len(missing) == 0 {
		return b
	}
	b = appendPropstatOpen(b)
	for _, n := range missing {
		b = appendOpen(b, n, true)
	}
	return appendPropstatClose(b, 404)
}
