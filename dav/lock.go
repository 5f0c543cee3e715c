package dav

import (
	"encoding/xml"
	"slices"
	"strconv"
	"time"

	"shoal"
)

// WebDAV locks on the wire (RFC 4918 §6, §9.10): the lockinfo body of a
// LOCK, the lockdiscovery and supportedlock properties, and whether the
// tokens a request submitted satisfy the locks on its path.

// ParseLockinfo reads a DAV:lockinfo body: scope, type (write) and owner.
func ParseLockinfo(body []byte) (*shoal.Lock, error) {
	const op = "LOCK"
	d, err := openDAVBody(op, body, "lockinfo")
	if err != nil {
		return nil, err
	}
	l := &shoal.Lock{}
	scoped, typed := false, false
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, xmlErr(op, err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if !scoped || !typed {
				return nil, shoal.Errorf(op, shoal.KindInvalid, "lockinfo needs lockscope and locktype")
			}
			return l, trailing(d, op)
		case xml.StartElement:
			switch t.Name {
			case xml.Name{Space: nsDAV, Local: "lockscope"}:
				names, err := childNames(d, nil)
				if err != nil || len(names) != 1 || names[0].Space != nsDAV ||
					(names[0].Local != "exclusive" && names[0].Local != "shared") {
					return nil, shoal.Errorf(op, shoal.KindInvalid, "lockscope must be exclusive or shared")
				}
				l.Exclusive, scoped = names[0].Local == "exclusive", true
			case xml.Name{Space: nsDAV, Local: "locktype"}:
				names, err := childNames(d, nil)
				if err != nil || len(names) != 1 || names[0] != (xml.Name{Space: nsDAV, Local: "write"}) {
					return nil, shoal.Errorf(op, shoal.KindInvalid, "locktype must be write")
				}
				typed = true
			case xml.Name{Space: nsDAV, Local: "owner"}:
				v, err := innerXML(d, nil)
				if err != nil {
					return nil, xmlErr(op, err)
				}
				l.Owner = string(v)
			default:
				if err := d.Skip(); err != nil {
					return nil, xmlErr(op, err)
				}
			}
		}
	}
}

// AppendLockReply appends the body of a LOCK's answer: l's lockdiscovery.
func AppendLockReply(b []byte, l *shoal.Lock) []byte {
	b = append(b, xmlHeader+"<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery>"...)
	b = appendActiveLock(b, l)
	return append(b, "</D:lockdiscovery></D:prop>\n"...)
}

func appendActiveLock(b []byte, l *shoal.Lock) []byte {
	b = append(b, "<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope>"...)
	if l.Exclusive {
		b = append(b, "<D:exclusive/>"...)
	} else {
		b = append(b, "<D:shared/>"...)
	}
	b = append(b, "</D:lockscope><D:depth>"...)
	if l.Infinity {
		b = append(b, "infinity"...)
	} else {
		b = append(b, '0')
	}
	b = append(b, "</D:depth>"...)
	if l.Owner != "" {
		b = append(b, "<D:owner>"...)
		b = append(b, l.Owner...)
		b = append(b, "</D:owner>"...)
	}
	b = append(b, "<D:timeout>Second-"...)
	b = strconv.AppendInt(b, int64(l.Timeout/time.Second), 10)
	b = append(b, "</D:timeout><D:locktoken><D:href>"...)
	b = appendEscaped(b, l.Token, false)
	b = append(b, "</D:href></D:locktoken><D:lockroot>"...)
	b = appendHref(b, l.Root, false)
	return append(b, "</D:lockroot></D:activelock>"...)
}

const supportedLockXML = "<D:supportedlock><D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>" +
	"<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry></D:supportedlock>"

// appendLockProps appends supportedlock or lockdiscovery for path, from
// locks: those of the request's target and below (see LiveProps).
func appendLockProps(b []byte, path string, name string, locks []shoal.Lock) []byte {
	if name == "supportedlock" {
		return append(b, supportedLockXML...)
	}
	n := 0
	for i := range locks {
		if locks[i].Covers(path) {
			if n == 0 {
				b = append(b, "<D:lockdiscovery>"...)
			}
			b = appendActiveLock(b, &locks[i])
			n++
		}
	}
	if n == 0 {
		return append(b, "<D:lockdiscovery/>"...)
	}
	return append(b, "</D:lockdiscovery>"...)
}

// CheckLocks returns KindLocked unless every lock of locks (those that
// apply to a request's path) has its token among submitted, taken by the
// same principal who; a shared lock is satisfied by any such token on the
// same root.
func CheckLocks(locks []shoal.Lock, who string, submitted []string) error {
	l := shoal.Blocking(locks, func(l *shoal.Lock) bool {
		return l.Principal == who && slices.Contains(submitted, l.Token)
	})
	if l != nil {
		return shoal.Errorf("lock", shoal.KindLocked, "%s is locked", l.Root)
	}
	return nil
}
