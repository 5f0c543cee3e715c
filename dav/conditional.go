package dav

import (
	"bytes"
	"errors"
	"net/http"
	"time"

	"shoal"
)

// Conditional requests (RFC 9110 §13): If-Match, If-None-Match,
// If-Unmodified-Since and If-Modified-Since, evaluated in the order of
// §13.2.2 against the request's target. On a PUT the If-Match list is
// checked again in the transaction that makes the new file visible (see
// shoal.Condition), so two writers holding the same ETag cannot both
// replace it; the other methods check it just before acting.

// ErrNotModified is the outcome "answer 304" of a GET or HEAD.
var ErrNotModified = errors.New("not modified")

// Conditions are a request's conditional headers, as sent.
type Conditions struct {
	IfMatch, IfNoneMatch, IfUnmodifiedSince, IfModifiedSince []byte
}

// None reports whether the request has no conditional header.
func (c *Conditions) None() bool {
	return len(c.IfMatch) == 0 && len(c.IfNoneMatch) == 0 && len(c.IfUnmodifiedSince) == 0 && len(c.IfModifiedSince) == 0
}

// DecidedInTx reports whether the catalog's write transaction decides
// these conditions by itself (shoal.Condition): none, If-None-Match: *,
// If-Match.
func (c *Conditions) DecidedInTx() bool {
	if len(c.IfUnmodifiedSince) > 0 || len(c.IfModifiedSince) > 0 {
		return false
	}
	inm := TrimSpace(c.IfNoneMatch)
	return len(inm) == 0 || len(inm) == 1 && inm[0] == '*'
}

// Evaluate applies c to e, the target (nil if it does not exist). safe is
// true for GET and HEAD: a matching If-None-Match or an unchanged
// If-Modified-Since then gives ErrNotModified; on other methods a matching
// If-None-Match is KindPrecondition. A malformed ETag list is KindInvalid;
// a malformed date is ignored, as §13.1.3 and §13.1.4 say.
func (c *Conditions) Evaluate(e *shoal.Entry, safe bool) error {
	const op = "precondition"
	if c.None() {
		return nil
	}
	var etag []byte
	if e != nil {
		var tmp [40]byte
		etag = e.AppendETag(tmp[:0])
	}
	if len(c.IfMatch) > 0 {
		ok, err := MatchETags(c.IfMatch, etag, true)
		if err != nil {
			return shoal.E(op, shoal.KindInvalid, err)
		}
		if !ok {
			return shoal.Errorf(op, shoal.KindPrecondition, "If-Match: the current ETag is not listed")
		}
	} else if len(c.IfUnmodifiedSince) > 0 && e != nil {
		if t, err := http.ParseTime(string(c.IfUnmodifiedSince)); err == nil && e.MTime.Truncate(time.Second).After(t) {
			return shoal.Errorf(op, shoal.KindPrecondition, "If-Unmodified-Since: modified since")
		}
	}
	if len(c.IfNoneMatch) > 0 {
		match, err := MatchETags(c.IfNoneMatch, etag, false)
		if err != nil {
			return shoal.E(op, shoal.KindInvalid, err)
		}
		if match {
			if safe {
				return ErrNotModified
			}
			return shoal.Errorf(op, shoal.KindPrecondition, "If-None-Match: the current ETag is listed")
		}
	} else if safe && len(c.IfModifiedSince) > 0 && e != nil {
		if t, err := http.ParseTime(string(c.IfModifiedSince)); err == nil && !e.MTime.Truncate(time.Second).After(t) {
			return ErrNotModified
		}
	}
	return nil
}

// errETagList is a malformed If-Match or If-None-Match value.
var errETagList = errors.New("malformed entity-tag list")

// MatchETags reports whether the field value list ("*" or a comma-separated
// list of entity-tags, RFC 9110 §8.8.3) matches etag, the target's strong
// ETag with its quotes (nil if the target does not exist). "*" matches any
// existing target. Strong comparison (If-Match) never matches a weak tag;
// weak comparison (If-None-Match) ignores the W/ prefix. An error when the
// list is malformed.
func MatchETags(list, etag []byte, strong bool) (bool, error) {
	if isStar(list) {
		return etag != nil, nil
	}
	matched := false
	err := eachETag(list, func(tag []byte, weak bool) {
		if etag != nil && !(strong && weak) && bytes.Equal(tag, etag) {
			matched = true
		}
	})
	return matched, err
}

func isStar(list []byte) bool {
	list = TrimSpace(list)
	return len(list) == 1 && list[0] == '*'
}

// eachETag calls fn for every entity-tag of a list (quotes included);
// errETagList if the list is empty or malformed.
func eachETag(list []byte, fn func(tag []byte, weak bool)) error {
	n := 0
	for {
		list = bytes.TrimLeft(list, " \t,")
		if len(list) == 0 {
			break
		}
		weak := false
		if bytes.HasPrefix(list, []byte("W/")) {
			weak, list = true, list[2:]
		}
		if len(list) < 2 || list[0] != '"' {
			return errETagList
		}
		end := bytes.IndexByte(list[1:], '"')
		if end < 0 {
			return errETagList
		}
		tag := list[:end+2]
		for _, c := range tag[1 : len(tag)-1] {
			if c < 0x21 || c == 0x7f { // etagc: no controls, spaces or quotes
				return errETagList
			}
		}
		fn(tag, weak)
		n++
		list = bytes.TrimLeft(list[end+2:], " \t")
		if len(list) > 0 && list[0] != ',' {
			return errETagList
		}
	}
	if n == 0 {
		return errETagList
	}
	return nil
}

// IfMatchList is a well-formed If-Match field as the list of strong ETags
// a PUT's commit must find ("*" alone: the file must exist). Weak tags
// and tags holding a comma (never one of ours) are left out; a list left
// empty becomes `""`, which no file matches.
func IfMatchList(h []byte) []string {
	if isStar(h) {
		return []string{"*"}
	}
	var tags []string
	eachETag(h, func(tag []byte, weak bool) {
		if !weak && bytes.IndexByte(tag, ',') < 0 {
			tags = append(tags, string(tag))
		}
	})
	if tags == nil {
		tags = []string{`""`}
	}
	return tags
}
