package dav

import (
	"encoding/xml"
)

// The PROPFIND bodies real clients send are a handful of shapes: allprop
// (gfal2, file managers), propname, and a list of named properties (davix,
// Windows, macOS, sync tools), written with an XML declaration and a DAV:
// prefix or default namespace. recognizePropfind reads those shapes with
// a byte scanner, no general-purpose XML decoder; anything else — a
// comment, an entity or character reference, CDATA, a DOCTYPE, a
// non-namespace attribute, an undeclared or redeclared prefix, an unknown
// DAV: child, text where there should be none — is left to parsePropfind
// (ok=false), which also says what is wrong with a malformed body. When it
// recognizes a body, the result is the one parsePropfind gives
// (FuzzRecognizePropfind checks that). Pure: no state.

// maxFastDepth bounds the nesting the scanner follows (propfind, prop, a
// property, its children): deeper bodies go to the parser.
const maxFastDepth = 8

// fastNS is one namespace declaration in scope.
type fastNS struct {
	prefix, uri string
	depth       int
}

type fastScanner struct {
	b     []byte
	i     int
	depth int
	open  [maxFastDepth + 1][2]string // the raw (prefix, local) names of the open elements
	ns    [16]fastNS
	nns   int
}

// recognizePropfind returns the request of a common PROPFIND body; ok is
// false when body is not one of the shapes it knows.
func recognizePropfind(body []byte) (req *Propfind, ok bool) {
	s := fastScanner{b: body}
	if s.hasPrefix("<?xml") {
		if !s.xmlDecl() {
			return nil, false
		}
	}
	s.space()
	name, empty, ok := s.startTag()
	if !ok || empty || name != (xml.Name{Space: nsDAV, Local: "propfind"}) {
		return nil, false
	}
	r := &Propfind{kind: findAllProp}
	seen := false
	for {
		s.space()
		if s.hasPrefix("</") {
			if !s.endTag() || !seen {
				return nil, false
			}
			s.space()
			if s.i != len(s.b) {
				return nil, false
			}
			return r, true
		}
		child, empty, ok := s.startTag()
		if !ok || child.Space != nsDAV {
			return nil, false
		}
		local := child.Local
		switch local {
		case "allprop", "propname":
			if !empty && !s.closeEmpty() {
				return nil, false
			}
			r.kind, seen = findAllProp, true
			if local == "propname" {
				r.kind = findPropName
			}
		case "prop", "include":
			var names []xml.Name
			if !empty {
				if names, ok = s.childNames(); !ok {
					return nil, false
				}
			}
			if local == "prop" {
				r.kind, seen = findProp, true
				r.names = append(r.names, names...)
			} else {
				r.include = append(r.include, names...)
			}
		default:
			return nil, false
		}
	}
}

// childNames reads the children of the element just opened up to its end
// tag: their names, their own content skipped.
func (s *fastScanner) childNames() ([]xml.Name, bool) {
	var names []xml.Name
	for {
		if !s.text() {
			return nil, false
		}
		if s.hasPrefix("</") {
			return names, s.endTag()
		}
		n, empty, ok := s.startTag()
		if !ok {
			return nil, false
		}
		names = append(names, n)
		if !empty && !s.skipContent() {
			return nil, false
		}
	}
}

// skipContent skips the content of the element just opened and its end
// tag.
func (s *fastScanner) skipContent() bool {
	for {
		if !s.text() {
			return false
		}
		if s.hasPrefix("</") {
			return s.endTag()
		}
		_, empty, ok := s.startTag()
		if !ok {
			return false
		}
		if !empty && !s.skipContent() {
			return false
		}
	}
}

// closeEmpty reads the end tag of an element opened as <x> that must have
// no content but whitespace.
func (s *fastScanner) closeEmpty() bool {
	s.space()
	return s.hasPrefix("</") && s.endTag()
}

// text skips whitespace up to the next '<'; any other character data
// (which the parser would check: references, invalid UTF-8, controls) is
// refused, as is the end of the body.
func (s *fastScanner) text() bool {
	s.space()
	return s.i < len(s.b) && s.b[s.i] == '<'
}

// startTag reads <prefix:local attrs> or <prefix:local attrs/>, whose
// attributes may only be namespace declarations (in scope from here on),
// and returns the element's resolved name.
func (s *fastScanner) startTag() (name xml.Name, empty, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '<' {
		return name, false, false
	}
	s.i++
	prefix, local, ok := s.qname()
	if !ok {
		return name, false, false
	}
	s.depth++
	if s.depth > maxFastDepth {
		return name, false, false
	}
	s.open[s.depth] = [2]string{prefix, local}
	for {
		sp := s.space()
		if s.i >= len(s.b) {
			return name, false, false
		}
		switch c := s.b[s.i]; {
		case c == '>':
			s.i++
		case c == '/' && s.i+1 < len(s.b) && s.b[s.i+1] == '>':
			s.i += 2
			empty = true
		default:
			if !sp || !s.nsAttr() {
				return name, false, false
			}
			continue
		}
		break
	}
	uri, found := s.lookup(prefix)
	if !found {
		return name, false, false
	}
	name = xml.Name{Space: uri, Local: local}
	if empty {
		s.pop()
	}
	return name, empty, true
}

// endTag reads the end tag of the element of the current depth (the same
// raw name as its start tag) and leaves its scope.
func (s *fastScanner) endTag() bool {
	s.i += 2
	p, l, ok := s.qname()
	if !ok || s.depth < 1 || s.open[s.depth] != [2]string{p, l} {
		return false
	}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '>' {
		return false
	}
	s.i++
	s.pop()
	return true
}

// xmlDecl reads an XML declaration at the very start of the body:
// version 1.0, and if an encoding is named, UTF-8 (the only one the
// parser reads), with an optional standalone.
func (s *fastScanner) xmlDecl() bool {
	s.i += len("<?xml")
	for n := 0; ; n++ {
		sp := s.space()
		if s.hasPrefix("?>") {
			s.i += 2
			return n > 0
		}
		if !sp {
			return false
		}
		_, name, ok := s.qname()
		if !ok {
			return false
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '=' {
			return false
		}
		s.i++
		s.space()
		v, ok := s.quoted()
		if !ok {
			return false
		}
		switch {
		case name == "version" && n == 0 && v == "1.0":
		case name == "encoding" && n > 0 && (v == "utf-8" || v == "UTF-8"):
		case name == "standalone" && n > 0 && (v == "yes" || v == "no"):
		default:
			return false
		}
	}
}

// quoted reads a quoted value of printable ASCII without references.
func (s *fastScanner) quoted() (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' && s.b[s.i] != '\'' {
		return "", false
	}
	q := s.b[s.i]
	s.i++
	start := s.i
	for s.i < len(s.b) && s.b[s.i] != q {
		if c := s.b[s.i]; c == '&' || c == '<' || c < 0x20 || c >= 0x80 {
			return "", false
		}
		s.i++
	}
	if s.i >= len(s.b) {
		return "", false
	}
	s.i++
	return string(s.b[start : s.i-1]), true
}

// nsAttr reads one xmlns="uri" or xmlns:p="uri" attribute.
func (s *fastScanner) nsAttr() bool {
	prefix, local, ok := s.qname()
	if !ok {
		return false
	}
	switch {
	case prefix == "" && local == "xmlns":
		prefix = ""
	case prefix == "xmlns" && local != "xml" && local != "xmlns":
		prefix = local
	default:
		return false
	}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '=' {
		return false
	}
	s.i++
	s.space()
	uri, ok := s.quoted()
	if !ok || uri == "" {
		return false // an empty namespace is the parser's to refuse
	}
	for k := s.nns - 1; k >= 0 && s.ns[k].depth == s.depth; k-- {
		if s.ns[k].prefix == prefix {
			return false // declared twice on one element
		}
	}
	if s.nns == len(s.ns) {
		return false
	}
	s.ns[s.nns] = fastNS{prefix: prefix, uri: uri, depth: s.depth}
	s.nns++
	return true
}

// lookup resolves a prefix in the current scope.
func (s *fastScanner) lookup(prefix string) (string, bool) {
	for k := s.nns - 1; k >= 0; k-- {
		if s.ns[k].prefix == prefix {
			return s.ns[k].uri, true
		}
	}
	if prefix == "" {
		return "", true // no default namespace
	}
	return "", false
}

// pop leaves the current element: its declarations go out of scope.
func (s *fastScanner) pop() {
	for s.nns > 0 && s.ns[s.nns-1].depth == s.depth {
		s.nns--
	}
	s.depth--
}

// qname reads a name of ASCII letters, digits and ._- with at most one
// colon (not first or last).
func (s *fastScanner) qname() (prefix, local string, ok bool) {
	start, colon := s.i, -1
	for s.i < len(s.b) {
		c := s.b[s.i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' ||
			s.i > start && ('0' <= c && c <= '9' || c == '.' || c == '-') {
			s.i++
			continue
		}
		if c == ':' && colon < 0 && s.i > start {
			colon = s.i
			s.i++
			if s.i < len(s.b) && (s.b[s.i] == '_' || 'a' <= s.b[s.i] && s.b[s.i] <= 'z' || 'A' <= s.b[s.i] && s.b[s.i] <= 'Z') {
				continue
			}
			return "", "", false
		}
		break
	}
	if s.i == start {
		return "", "", false
	}
	if colon < 0 {
		return "", string(s.b[start:s.i]), true
	}
	return string(s.b[start:colon]), string(s.b[colon+1 : s.i]), true
}

// space skips XML whitespace and reports whether there was any.
func (s *fastScanner) space() bool {
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
			continue
		}
		break
	}
	return s.i > start
}

func (s *fastScanner) hasPrefix(p string) bool {
	return len(s.b)-s.i >= len(p) && string(s.b[s.i:s.i+len(p)]) == p
}
