package dav

import (
	"bytes"
	"encoding/xml"
	"io"
	"strconv"

	"shoal"
)

const nsDAV = "DAV:"
const nsXML = "http://www.w3.org/XML/1998/namespace"

func xmlErr(op string, err error) error {
	return shoal.Errorf(op, shoal.KindInvalid, "malformed XML body: %v", err)
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
