package dav

import (
	"bytes"
	"encoding/xml"
	"io"

	"shoal"
)

// checkNamespaces enforces what encoding/xml lets through but XML
// Namespaces 1.0 forbids, so that such bodies get 400 (litmus
// propfind_invalid2): an empty prefixed declaration (xmlns:p=""), and
// element or attribute prefixes that are not declared.
func checkNamespaces(op string, body []byte) error {
	d := xml.NewDecoder(bytes.NewReader(body))
	var scopes []map[string]bool
	declared := func(prefix string) bool {
		if prefix == "" || prefix == "xml" || prefix == "xmlns" {
			return true
		}
		for i := len(scopes) - 1; i >= 0; i-- {
			if scopes[i][prefix] {
				return true
			}
		}
		return false
	}
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return xmlErr(op, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			var scope map[string]bool
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" {
					if a.Value == "" {
						return shoal.Errorf(op, shoal.KindInvalid, "malformed XML body: empty namespace for prefix %q", a.Name.Local)
					}
					if scope == nil {
						scope = map[string]bool{}
					}
					scope[a.Name.Local] = true
				}
			}
			scopes = append(scopes, scope)
			if !declared(t.Name.Space) {
				return shoal.Errorf(op, shoal.KindInvalid, "malformed XML body: undeclared prefix %q", t.Name.Space)
			}
			for _, a := range t.Attr {
				if !declared(a.Name.Space) {
					return shoal.Errorf(op, shoal.KindInvalid, "malformed XML body: undeclared prefix %q", a.Name.Space)
				}
			}
		case xml.EndElement:
			if len(scopes) > 0 {
				scopes = scopes[:len(scopes)-1]
			}
		}
	}
}
