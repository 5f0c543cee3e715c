package tlsconf

import (
	"bytes"
	"crypto/sha1"
	"crypto/x509"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// SubjectHash is OpenSSL's X509_NAME_hash of the certificate's subject
// (what `openssl x509 -hash` prints and `openssl rehash` names files
// after): the first four bytes, little-endian, of the SHA-1 of the
// subject's canonical encoding, as 8 hex digits. A CA stored as
// DIR/HASH.0 is found by OpenSSL's hashed-directory lookup, which is what
// `davix --capath DIR` (and curl --capath with OpenSSL) use.
func SubjectHash(cert *x509.Certificate) (string, error) {
	canon, err := canonicalName(cert.RawSubject)
	if err != nil {
		return "", err
	}
	sum := sha1.Sum(canon)
	return fmt.Sprintf("%08x", binary.LittleEndian.Uint32(sum[:4])), nil
}

// canonicalName is OpenSSL's x509_name_canon: every RDN re-encoded as a
// SET of SEQUENCE{type, value} where string values become UTF8String,
// trimmed, with inner runs of whitespace collapsed to one space and ASCII
// lowercased; the RDNs concatenated without the outer SEQUENCE header.
func canonicalName(rawSubject []byte) ([]byte, error) {
	var seq asn1.RawValue
	if rest, err := asn1.Unmarshal(rawSubject, &seq); err != nil || len(rest) > 0 || seq.Tag != asn1.TagSequence {
		return nil, errors.New("subject is not a DER SEQUENCE")
	}
	var out bytes.Buffer
	for rdns := seq.Bytes; len(rdns) > 0; {
		var set asn1.RawValue
		var err error
		if rdns, err = asn1.Unmarshal(rdns, &set); err != nil || set.Tag != asn1.TagSet {
			return nil, errors.New("subject RDN is not a SET")
		}
		var entries [][]byte
		for atvs := set.Bytes; len(atvs) > 0; {
			var atv struct {
				Type  asn1.ObjectIdentifier
				Value asn1.RawValue
			}
			if atvs, err = asn1.Unmarshal(atvs, &atv); err != nil {
				return nil, fmt.Errorf("subject attribute: %w", err)
			}
			value := atv.Value.FullBytes
			if s, ok := decodeString(atv.Value); ok {
				value, err = asn1.MarshalWithParams(canonicalString(s), "utf8")
				if err != nil {
					return nil, err
				}
			}
			oid, err := asn1.Marshal(atv.Type)
			if err != nil {
				return nil, err
			}
			entry, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: append(oid, value...)})
			if err != nil {
				return nil, err
			}
			entries = append(entries, entry)
		}
		// DER orders the members of a SET OF by their encodings.
		sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i], entries[j]) < 0 })
		enc, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSet, IsCompound: true, Bytes: bytes.Join(entries, nil)})
		if err != nil {
			return nil, err
		}
		out.Write(enc)
	}
	return out.Bytes(), nil
}

// decodeString returns the UTF-8 text of the string types OpenSSL
// canonicalises (ASN1_MASK_CANON); other values are hashed as they are.
func decodeString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagUTF8String, asn1.TagPrintableString, asn1.TagIA5String, 26 /* VisibleString */ :
		return string(v.Bytes), true
	case asn1.TagT61String: // one byte per character, as OpenSSL reads it
		var b strings.Builder
		for _, c := range v.Bytes {
			b.WriteRune(rune(c))
		}
		return b.String(), true
	case asn1.TagBMPString:
		u := make([]uint16, len(v.Bytes)/2)
		for i := range u {
			u[i] = binary.BigEndian.Uint16(v.Bytes[2*i:])
		}
		return string(utf16.Decode(u)), true
	case 28: // UniversalString, UCS-4
		var b strings.Builder
		for i := 0; i+4 <= len(v.Bytes); i += 4 {
			b.WriteRune(rune(binary.BigEndian.Uint32(v.Bytes[i:])))
		}
		return b.String(), true
	}
	return "", false
}

// canonicalString is asn1_string_canon on UTF-8 text.
func canonicalString(s string) string {
	isSpace := func(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			b.WriteByte(c)
			i++
		case isSpace(c):
			b.WriteByte(' ')
			for i < len(s) && isSpace(s[i]) {
				i++
			}
		default:
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
