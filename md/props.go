package md

import (
	"encoding/xml"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
)

// Live properties md computes from the entry. The quota properties (RFC
// 4331) cost a catalog query each, so they are sent only when asked for by
// name, never in allprop.
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

// liveValues computes what live properties need beyond the entry, once
// per request (the quota chain and pool space of the target: quota.go).
type liveValues struct {
	srv *Server
	q   quotaValues

	// The locks at the PROPFIND's target (and below it, for a listing),
	// read once per request and only while some lock exists.
	target   string
	listing  bool
	locksOK  bool
	locks    []shoal.Lock
	locksErr error
}

func (lv *liveValues) locksFor() ([]shoal.Lock, error) {
	if !lv.locksOK {
		lv.locksOK = true
		if lv.srv.anyLocks() {
			lv.locks, lv.locksErr = lv.srv.cat.Locks(lv.srv.base, lv.target, lv.listing, time.Now())
		}
	}
	return lv.locks, lv.locksErr
}

// appendLive appends live property n of e with its value; ok=false if e
// does not have it (the caller reports 404 for it). The quota properties
// fail with the catalog's error.
func (lv *liveValues) appendLive(b []byte, e *shoal.Entry, n xml.Name) (out []byte, ok bool, err error) {
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
		b = fasthttp.AppendHTTPDate(b, e.MTime)
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
		b = append(b, contentType(e.Path)...)
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
