package gw

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"shoal"
	"shoal/internal/objhttp"
	"shoal/sign"
)

// Query parameters of a gw object URL, besides sign's exp, kid, sig, up.
const (
	ParamLayout  = "l"   // the file's layout, "ec:K+M"
	ParamServers = "srv" // the K+M data-server ids holding shards 0…K+M-1, comma-separated
)

// signExtra is the "extra" a gw URL's signature covers: the upload id, the
// layout and the shard servers, so none can be changed by the client.
func signExtra(upload string, layout shoal.Layout, servers []string) string {
	return upload + "|" + layout.String() + "|" + strings.Join(servers, ",")
}

// SignedURL returns base + "/obj/" + object with a signature for method
// valid until exp, over upload (empty for GET/HEAD/DELETE and for a PUT
// that should not commit), layout and the ordered shard servers. md uses it
// to redirect EC data requests to a gw.
func SignedURL(keys *sign.Keys, base, method, object, upload string, layout shoal.Layout, servers []string, exp time.Time) string {
	e := exp.Unix()
	kid, sig := keys.Sign(method, object, e, signExtra(upload, layout, servers))
	q := url.Values{}
	q.Set(sign.ParamExpiry, strconv.FormatInt(e, 10))
	q.Set(sign.ParamKeyID, kid)
	q.Set(sign.ParamSig, sig)
	if upload != "" {
		q.Set(sign.ParamUpload, upload)
	}
	q.Set(ParamLayout, layout.String())
	q.Set(ParamServers, strings.Join(servers, ","))
	return strings.TrimRight(base, "/") + sign.ObjectPath(object) + "?" + q.Encode()
}

// request is a verified gw object request.
type request struct {
	upload  string
	layout  shoal.Layout
	servers []string
}

// verifyQuery checks a gw URL's query for method on object. A HEAD may use
// a URL signed for GET. Bad or missing signature: KindPermission (403);
// a server list of the wrong length for the layout (ec:K+M, or replica:N
// for md's mirrored writes), or with a repeated id: KindInvalid. An
// erasure-coded file's list may leave out (empty id) up to M-1 shards:
// those a degraded write did not place, keeping at least one parity.
func verifyQuery(keys *sign.Keys, method, object string, get func(string) string, now time.Time) (request, error) {
	const op = "gw.verify"
	r := request{upload: get(sign.ParamUpload)}
	layoutS, srv := get(ParamLayout), get(ParamServers)
	if err := objhttp.Verify(keys, op, method, object, r.upload+"|"+layoutS+"|"+srv, get, now); err != nil {
		return request{}, err
	}
	var err error
	if r.layout, err = shoal.ParseLayout(layoutS); err != nil {
		return request{}, err
	}
	r.servers = strings.Split(srv, ",")
	if len(r.servers) != r.layout.Width() {
		return request{}, shoal.Errorf(op, shoal.KindInvalid, "%s needs %d servers, got %d", r.layout, r.layout.Width(), len(r.servers))
	}
	seen := map[string]bool{}
	absent := 0
	for _, s := range r.servers {
		if s == "" {
			absent++
			continue
		}
		if seen[s] {
			return request{}, shoal.Errorf(op, shoal.KindInvalid, "server list repeats %s", s)
		}
		seen[s] = true
	}
	if absent > 0 && (r.layout.Kind != shoal.LayoutEC || absent >= r.layout.M) {
		return request{}, shoal.Errorf(op, shoal.KindInvalid, "%s: %d shards without a server (at most %d may be left out, keeping one parity)",
			r.layout, absent, max(r.layout.M-1, 0))
	}
	return r, nil
}
