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
const NoLimit = shoal.Unbounded

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

// ParamCallerCommits marks a PUT URL whose upload is committed by the
// sender of its body (md, streaming a client's body to the data server)
// rather than by the data server: the data server stores the object
// durably and answers with what its commit would have said. The
// signature covers it, so it can be neither added nor dropped.
const ParamCallerCommits = "cc"

// callerCommitsExtra is what ParamCallerCommits adds to a signature.
const callerCommitsExtra = "|cc"

// LimitURLAs is PutURLAs signed for method (a third-party pull, which
// writes like a PUT: tpc.SignedMethod).
func (k *Keys) LimitURLAs(base, method, object, upload, principal string, max int64, exp time.Time) string {
	return k.limitURL(base, method, object, upload, principal, max, exp, false)
}

// CallerCommitsURLAs is PutURLAs for a body md sends itself and whose
// upload it commits (ParamCallerCommits).
func (k *Keys) CallerCommitsURLAs(base, object, upload, principal string, max int64, exp time.Time) string {
	return k.limitURL(base, "PUT", object, upload, principal, max, exp, true)
}

func (k *Keys) limitURL(base, method, object, upload, principal string, max int64, exp time.Time, callerCommits bool) string {
	e := exp.Unix()
	extra := LimitExtra(upload, max)
	if callerCommits {
		extra += callerCommitsExtra
	}
	kid, sig := k.Sign(method, object, e, WithPrincipal(extra, principal))
	q := url.Values{}
	if callerCommits {
		q.Set(ParamCallerCommits, "1")
	}
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

// Grant is what a verified data-server object URL allows besides its
// method on its object.
type Grant struct {
	Upload string // the upload the object is for ("" for none)
	Max    int64  // the body bound (NoLimit for none)
	// CallerCommits: the sender of the body commits the upload, not the
	// data server (ParamCallerCommits).
	CallerCommits bool
}

// VerifyObjectQuery checks a data-server object URL (as URLAs, PutURLAs
// and CallerCommitsURLAs make them) for method on object and returns what
// it grants. Missing, bad or tampered: KindPermission.
func (k *Keys) VerifyObjectQuery(method, object string, get func(string) string, now time.Time) (Grant, error) {
	g := Grant{Upload: get(ParamUpload)}
	extra := g.Upload
	if raw := get(ParamMax); raw != "" {
		extra += "|max=" + raw // as signed: the signature decides, then it is parsed
	}
	switch get(ParamCallerCommits) {
	case "":
	case "1":
		extra += callerCommitsExtra
		g.CallerCommits = true
	default:
		return Grant{}, shoal.Errorf("sign.VerifyObjectQuery", shoal.KindPermission, "bad %s", ParamCallerCommits)
	}
	if err := k.VerifyQuery(method, object, extra, get, now); err != nil {
		return Grant{}, err
	}
	var err error
	if g.Max, err = ReadLimit(get); err != nil {
		return Grant{}, err
	}
	return g, nil
}
