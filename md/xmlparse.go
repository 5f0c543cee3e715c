package md

import (
	"bytes"
	"encoding/xml"
	"io"
	"strconv"

	"shoal"
)

const nsDAV = "DAV:"
const nsXML = "http://www.w3.org/XML/1998/namespace"

// PROPFIND request kinds (RFC 4918 14.20).
const (
	findAllProp = iota
	findPropName
	findProp
)

// propfindReq is a parsed PROPFIND body.
type propfindReq struct {
	kind    int
	names   []xml.Name // findProp: the requested properties
	include []xml.Name // findAllProp: <include> extras
}

func xmlErr(op string, err error) error {
	return shoal.Errorf(op, shoal.KindInvalid, "malformed XML body: %v", err)
}

// parsePropfind parses a PROPFIND body; an empty body means allprop.
func parsePropfind(body []byte) (*propfindReq, error) {
	const op = "PROPFIND"
	r := &propfindReq{kind: findAllProp}
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

// openDAVBody checks body's namespaces and that its root element is
// DAV:root, and returns the decoder positioned after that start tag.
func openDAVBody(op string, body []byte, root string) (*xml.Decoder, error) {
	if err := checkNamespaces(op, body); err != nil {
		return nil, err
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	start, err := rootElement(d)
	if err != nil {
		return nil, xmlErr(op, err)
	}
	if start.Name != (xml.Name{Space: nsDAV, Local: root}) {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "root element must be DAV:%s", root)
	}
	return d, nil
}

// rootElement returns the document's first element.
func rootElement(d *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, err
		}
		if t, ok := tok.(xml.StartElement); ok {
			return t, nil
		}
	}
}

// trailing checks that nothing but whitespace, comments or processing
// instructions follows the root element.
func trailing(d *xml.Decoder, op string) error {
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return xmlErr(op, err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return shoal.Errorf(op, shoal.KindInvalid, "text after the root element")
			}
		case xml.StartElement:
			return shoal.Errorf(op, shoal.KindInvalid, "second root element")
		}
	}
}

// childNames appends the names of the child elements of the current
// element, up to its end.
func childNames(d *xml.Decoder, names []xml.Name) ([]xml.Name, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			names = append(names, t.Name)
			if err := d.Skip(); err != nil {
				return nil, err
			}
		case xml.EndElement:
			return names, nil
		}
	}
}

// patchOp is one set or remove of a PROPPATCH, in document order.
type patchOp struct {
	remove bool
	prop   shoal.Prop
}

// parseProppatch parses a DAV:propertyupdate body. Values of set
// properties are re-serialized with every namespace declared on the
// element that uses it, so they stay correct out of their original
// document.
func parseProppatch(body []byte) ([]patchOp, error) {
	const op = "PROPPATCH"
	d, err := openDAVBody(op, body, "propertyupdate")
	if err != nil {
		return nil, err
	}
	var ops []patchOp
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
func parseSetRemove(d *xml.Decoder, remove bool, ops []patchOp) ([]patchOp, error) {
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
				ops = append(ops, patchOp{remove: remove, prop: shoal.Prop{Space: p.Name.Space, Name: p.Name.Local, Value: string(value)}})
			}
		}
	}
}

// innerXML re-serializes the content of the current element up to its
// end: each element declares its own namespace (xmlns="…"), attributes in
// a namespace get a local prefix, comments and processing instructions
// are dropped.
func innerXML(d *xml.Decoder, b []byte) ([]byte, error) {
	depth := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			b = append(b, '<')
			b = append(b, t.Name.Local...)
			b = append(b, " xmlns=\""...)
			b = appendEscaped(b, t.Name.Space, true)
			b = append(b, '"')
			n := 0
			for _, a := range t.Attr {
				switch {
				case a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns":
					continue
				case a.Name.Space == "":
					b = append(b, ' ')
				case a.Name.Space == nsXML || a.Name.Space == "xml":
					b = append(b, " xml:"...)
				default:
					prefix := "a" + strconv.Itoa(n)
					n++
					b = append(b, " xmlns:"+prefix+"=\""...)
					b = appendEscaped(b, a.Name.Space, true)
					b = append(b, "\" "+prefix+":"...)
				}
				b = append(b, a.Name.Local...)
				b = append(b, "=\""...)
				b = appendEscaped(b, a.Value, true)
				b = append(b, '"')
			}
			b = append(b, '>')
		case xml.EndElement:
			if depth == 0 {
				return b, nil
			}
			depth--
			b = append(b, "</"...)
			b = append(b, t.Name.Local...)
			b = append(b, '>')
		case xml.CharData:
			b = appendEscaped(b, string(t), false)
		}
	}
}
