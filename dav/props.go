package dav

import (
	"encoding/xml"
	"strconv"
	"time"

	"shoal"
)

// The live properties md computes (RFC 4918 §15, RFC 4331), and the
// <D:response> of a PROPFIND. The quota properties cost catalog queries,
// so they are sent only when asked for by name, never in allprop; the
// lock properties are read once per request, and only while some lock
// exists (PropSource.Locks).
var (
	pResourceType    = xml.Name{Space: nsDAV, Local: "resourcetype"}
	pContentLength   = xml.Name{Space: nsDAV, Local: "getcontentlength"}
	pLastModified    = xml.Name{Space: nsDAV, Local: "getlastmodified"}
	pCreationDate    = xml.Name{Space: nsDAV, Local: "creationdate"}
	pETag            = xml.Name{Space: nsDAV, Local: "getetag"}
	pContentType     = xml.Name{Space: nsDAV, Local: "getcontenttype"}
	pDisplayName     = xml.Name{Space: nsDAV, Local: "displayname"}
	pQuotaAvailable  = xml.Name{Space: nsDAV, Local: "quota-available-bytes"}
	pQuotaUsed       = xml.Name{Space: nsDAV, Local: "quota-used-bytes"}
	pSupportedLock   = xml.Name{Space: nsDAV, Local: "supportedlock"}
	pLockDiscovery   = xml.Name{Space: nsDAV, Local: "lockdiscovery"}
	allpropLive      = []xml.Name{pResourceType, pContentLength, pLastModified, pCreationDate, pETag, pContentType, pDisplayName}
	propnameDirLive  = []xml.Name{pResourceType, pLastModified, pCreationDate, pETag, pDisplayName, pQuotaAvailable, pQuotaUsed, pSupportedLock, pLockDiscovery}
	propnameFileLive = []xml.Name{pResourceType, pContentLength, pLastModified, pCreationDate, pETag, pContentType, pDisplayName, pQuotaAvailable, pQuotaUsed, pSupportedLock, pLockDiscovery}
)

// isLive reports whether n is a property md computes (and so protects
// from PROPPATCH).
func isLive(n xml.Name) bool {
	if n.Space != nsDAV {
		return false
	}
	switch n.Local {
	case "resourcetype", "getcontentlength", "getlastmodified", "creationdate", "getetag",
		"getcontenttype", "displayname", "quota-available-bytes", "quota-used-bytes",
		"supportedlock", "lockdiscovery":
		return true
	}
	return false
}

// PropSource gives the live properties that are not in an entry. md
// implements it over its catalog; its answers are read at most once per
// request for the PROPFIND's target (and once per member collection with
// a quota of its own, in a listing).
type PropSource interface {
	// QuotasFor returns the quotas governing path, nearest first.
	QuotasFor(path string) ([]shoal.Quota, error)
	// PoolFree is the room for new files at path in user bytes: the free
	// space of its pool's live servers over what the layout stores per
	// byte.
	PoolFree(path string) (int64, error)
	// Usage is the bytes at or below path.
	Usage(path string) (int64, error)
	// Locks returns the locks at path and, with subtree, below it: nil
	// when no lock may exist.
	Locks(path string, subtree bool) ([]shoal.Lock, error)
}

// LiveProps writes the responses of one PROPFIND: for its target, and
// for the members of a listing (a Depth 1 PROPFIND of a collection).
// What it reads from its PropSource is kept for the rest of the request.
type LiveProps struct {
	src     PropSource
	target  string
	listing bool
	q       quotaValues

	locksOK  bool
	locks    []shoal.Lock
	locksErr error
}

// NewLiveProps starts the responses of a PROPFIND of target (a listing:
// target's members too).
func NewLiveProps(src PropSource, target string, listing bool) LiveProps {
	return LiveProps{src: src, target: target, listing: listing}
}

func (lv *LiveProps) locksFor() ([]shoal.Lock, error) {
	if !lv.locksOK {
		lv.locksOK = true
		lv.locks, lv.locksErr = lv.src.Locks(lv.target, lv.listing)
	}
	return lv.locks, lv.locksErr
}

// appendLive appends live property n of e with its value; ok=false if e
// does not have it (the caller reports 404 for it). The quota and lock
// properties fail with their source's error.
func (lv *LiveProps) appendLive(b []byte, e *shoal.Entry, n xml.Name) (out []byte, ok bool, err error) {
	if n.Space != nsDAV {
		return b, false, nil
	}
	switch n.Local {
	case "resourcetype":
		if e.IsDir {
			return append(b, "<D:resourcetype><D:collection/></D:resourcetype>"...), true, nil
		}
		return append(b, "<D:resourcetype/>"...), true, nil
	case "getcontentlength":
		if e.IsDir {
			return b, false, nil
		}
		b = append(b, "<D:getcontentlength>"...)
		b = strconv.AppendInt(b, e.Size, 10)
		return append(b, "</D:getcontentlength>"...), true, nil
	case "getlastmodified":
		b = append(b, "<D:getlastmodified>"...)
		b = appendHTTPDate(b, e.MTime)
		return append(b, "</D:getlastmodified>"...), true, nil
	case "creationdate":
		b = append(b, "<D:creationdate>"...)
		b = e.CTime.UTC().AppendFormat(b, time.RFC3339)
		return append(b, "</D:creationdate>"...), true, nil
	case "getetag":
		b = append(b, "<D:getetag>"...)
		b = e.AppendETag(b)
		return append(b, "</D:getetag>"...), true, nil
	case "getcontenttype":
		if e.IsDir {
			return b, false, nil
		}
		b = append(b, "<D:getcontenttype>"...)
		b = append(b, ContentType(e.Path)...)
		return append(b, "</D:getcontenttype>"...), true, nil
	case "displayname":
		b = append(b, "<D:displayname>"...)
		b = appendEscaped(b, e.Name(), false)
		return append(b, "</D:displayname>"...), true, nil
	case "quota-available-bytes":
		avail, err := lv.available(e)
		if err != nil {
			return b, false, err
		}
		b = append(b, "<D:quota-available-bytes>"...)
		b = strconv.AppendInt(b, avail, 10)
		return append(b, "</D:quota-available-bytes>"...), true, nil
	case "supportedlock", "lockdiscovery":
		locks, err := lv.locksFor()
		if err != nil {
			return b, false, err
		}
		return appendLockProps(b, e.Path, n.Local, locks), true, nil
	case "quota-used-bytes":
		used, err := lv.used(e)
		if err != nil {
			return b, false, err
		}
		b = append(b, "<D:quota-used-bytes>"...)
		b = strconv.AppendInt(b, used, 10)
		return append(b, "</D:quota-used-bytes>"...), true, nil
	}
	return b, false, nil
}

// appendHTTPDate appends t in the IMF-fixdate form of HTTP (RFC 9110
// §5.6.7), as Last-Modified has it.
func appendHTTPDate(b []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(b, "Mon, 02 Jan 2006 15:04:05 GMT")
}
