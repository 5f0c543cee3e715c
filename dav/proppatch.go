package dav

import (
	"encoding/xml"

	"shoal"
)

// PatchOp is one set or remove of a PROPPATCH, in document order.
type PatchOp struct {
	Remove bool
	Prop   shoal.Prop
}

// ParseProppatch parses a DAV:propertyupdate body. Values of set
// properties are re-serialized with every namespace declared on the
// element that uses it, so they stay correct out of their original
// document.
func ParseProppatch(body []byte) ([]PatchOp, error) {
	const op = "PROPPATCH"
	d, err := openDAVBody(op, body, "propertyupdate")
	if err != nil {
		return nil, err
	}
	var ops []PatchOp
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, xmlErr(op, err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if len(ops) == 0 {
				return nil, shoal.Errorf(op, shoal.KindInvalid, "propertyupdate sets or removes nothing")
			}
			return ops, trailing(d, op)
		case xml.StartElement:
			remove := t.Name == xml.Name{Space: nsDAV, Local: "remove"}
			if !remove && t.Name != (xml.Name{Space: nsDAV, Local: "set"}) {
				if err := d.Skip(); err != nil {
					return nil, xmlErr(op, err)
				}
				continue
			}
			if ops, err = parseSetRemove(d, remove, ops); err != nil {
				return nil, xmlErr(op, err)
			}
		}
	}
}

// parseSetRemove reads the <prop> elements of one <set> or <remove>.
func parseSetRemove(d *xml.Decoder, remove bool, ops []PatchOp) ([]PatchOp, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return ops, nil
		case xml.StartElement:
			if t.Name != (xml.Name{Space: nsDAV, Local: "prop"}) {
				if err := d.Skip(); err != nil {
					return nil, err
				}
				continue
			}
			for {
				tok, err := d.Token()
				if err != nil {
					return nil, err
				}
				if _, ok := tok.(xml.EndElement); ok {
					break
				}
				p, ok := tok.(xml.StartElement)
				if !ok {
					continue
				}
				var value []byte
				if remove {
					err = d.Skip()
				} else {
					value, err = innerXML(d, nil)
				}
				if err != nil {
					return nil, err
				}
				ops = append(ops, PatchOp{Remove: remove, Prop: shoal.Prop{Space: p.Name.Space, Name: p.Name.Local, Value: string(value)}})
			}
		}
	}
}

// SplitProtected sorts the properties ops touch into the live ones, which
// a PROPPATCH may not change (then nothing changes), and the others.
func SplitProtected(ops []PatchOp) (protected, others []xml.Name) {
	for _, o := range ops {
		n := xml.Name{Space: o.Prop.Space, Local: o.Prop.Name}
		if isLive(n) {
			protected = append(protected, n)
		} else {
			others = append(others, n)
		}
	}
	return protected, others
}

// Collapse turns ops in document order into the final set and remove
// lists: the last operation on a property wins.
func Collapse(ops []PatchOp) (set, remove []shoal.Prop) {
	last := make(map[xml.Name]int, len(ops))
	for i, o := range ops {
		last[xml.Name{Space: o.Prop.Space, Local: o.Prop.Name}] = i
	}
	for i, o := range ops {
		if last[xml.Name{Space: o.Prop.Space, Local: o.Prop.Name}] != i {
			continue
		}
		if o.Remove {
			remove = append(remove, shoal.Prop{Space: o.Prop.Space, Name: o.Prop.Name})
		} else {
			set = append(set, o.Prop)
		}
	}
	return set, remove
}

// AppendPatchResponse appends the multistatus of a PROPPATCH of e: when
// it touched live properties (protected), 403 for those and 424 (failed
// dependency) for the rest, as nothing changed; else 200 for all.
func AppendPatchResponse(b []byte, e *shoal.Entry, protected, others []xml.Name) []byte {
	b = append(b, MultistatusOpen...)
	b = append(b, "<D:response>"...)
	b = appendHref(b, e.Path, e.IsDir)
	if len(protected) > 0 {
		b = appendProtected(b, protected)
		b = appendPropstat(b, others, 424)
	} else {
		b = appendPropstat(b, others, 200)
	}
	b = append(b, "</D:response>"...)
	return append(b, MultistatusClose...)
}

// appendProtected appends the 403 propstat of live properties a PROPPATCH
// tried to change, with the precondition that failed (RFC 4918 §16:
// DAV:cannot-modify-protected-property; the quota properties of RFC 4331
// are among them).
func appendProtected(b []byte, names []xml.Name) []byte {
	b = appendPropstat(b, names, 403)
	b = b[:len(b)-len("</D:propstat>")]
	b = append(b, "<D:error><D:cannot-modify-protected-property/></D:error>"...)
	return append(b, "</D:propstat>"...)
}

// appendPropstat appends one propstat naming props with status code.
func appendPropstat(b []byte, names []xml.Name, code int) []byte {
	if len(names) == 0 {
		return b
	}
	b = appendPropstatOpen(b)
	seen := make(map[xml.Name]bool, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			b = appendOpen(b, n, true)
		}
	}
	return appendPropstatClose(b, code)
}
