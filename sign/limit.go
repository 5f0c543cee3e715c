package sign

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"shoal"
)

// ParamMax is the query parameter of a PUT URL that bounds the upload: the
// bytes md reserved for it (its Content-Length, or for a body of unknown
// length md.chunked_reserve or what the quotas had left). The signature
// covers it, so a client can neither raise nor drop it; the data server
// (or gw) stops the upload there.
const ParamMax = "max"

// NoLimit is the max of a URL without ParamMax.
const NoLimit = -1

// LimitExtra appends the signed form of max to extra (what else a URL's
// signature covers); nothing for NoLimit, so URLs without a bound sign
// and verify as before.
func LimitExtra(extra string, max int64) string {
	if max < 0 {
		return extra
	}
	return extra + "|max=" + strconv.FormatInt(max, 10)
}

// PutURLAs is URLAs for a PUT whose body may be at most max bytes
// (NoLimit: unbounded), for the upload id upload, made for principal (""
// for none): the URL names the bound (ParamMax) and its signature covers
// it.
func (k *Keys) PutURLAs(base, object, upload, principal string, max int64, exp time.Time) string {
	return k.LimitURLAs(base, "PUT", object, upload, principal, max, exp)
}

// LimitURLAs is PutURLAs signed for method (a third-party pull, which
// writes like a PUT: tpc.SignedMethod).
func (k *Keys) LimitURLAs(base, method, object, upload, principal string, max int64, exp time.Time) string {
	e := exp.Unix()
	kid, sig := k.Sign(method, object, e, WithPrincipal(LimitExtra(upload, max), principal))
	q := url.Values{}
	q.Set(ParamExpiry, strconv.FormatInt(e, 10))
	q.Set(ParamKeyID, kid)
	q.Set(ParamSig, sig)
	if upload != "" {
		q.Set(ParamUpload, upload)
	}
	if principal != "" {
		q.Set(ParamPrincipal, principal)
	}
	if max >= 0 {
		q.Set(ParamMax, strconv.FormatInt(max, 10))
	}
	return strings.TrimRight(base, "/") + ObjectPath(object) + "?" + q.Encode()
}

// ReadLimit reads ParamMax as get returns it: NoLimit when absent, else a
// decimal byte count. KindPermission when malformed (only a URL md signed
// gets this far, and md writes it well).
func ReadLimit(get func(string) string) (int64, error) {
	s := get(ParamMax)
	if s == "" {
		return NoLimit, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, shoal.Errorf("sign.ReadLimit", shoal.KindPermission, "bad %s", ParamMax)
	}
	return n, nil
}

// VerifyObjectQuery checks a data-server object URL (as URLAs and
// PutURLAs make them) for method on object and returns its upload id and its
// bound (NoLimit when it has none). Missing, bad or tampered:
// KindPermission.
func (k *Keys) VerifyObjectQuery(method, object string, get func(string) string, now time.Time) (upload string, max int64, err error) {
	upload = get(ParamUpload)
	extra := upload
	if raw := get(ParamMax); raw != "" {
		extra += "|max=" + raw // as signed: the signature decides, then it is parsed
	}
	if err := k.VerifyQuery(method, object, extra, get, now); err != nil {
		return "", 0, err
	}
	if max, err = ReadLimit(get); err != nil {
		return "", 0, err
	}
	return upload, max, nil
}
