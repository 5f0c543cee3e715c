package wire

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"shoal"
	"shoal/sign"
)

// Query parameters of a gw object URL, besides sign's exp, kid, sig, up.
const (
	ParamLayout  = "l"   // the file's layout, "ec:K+M"
	ParamServers = "srv" // the K+M data-server ids holding shards 0…K+M-1, comma-separated
)

// gatewayExtra is the "extra" a gw URL's signature covers: the upload id, the
// layout and the shard servers, so none can be changed by the client.
func gatewayExtra(upload string, layout shoal.Layout, servers []string) string {
	return upload + "|" + layout.String() + "|" + strings.Join(servers, ",")
}

// GatewayURL returns base + "/obj/" + object with a signature for method
// valid until exp, over upload (empty for GET/HEAD/DELETE and for a PUT
// that should not commit), layout and the ordered shard servers (an empty
// id: a shard a degraded write leaves out). md uses it to redirect EC
// data requests and replica:N writes to a gw.
func GatewayURL(keys *sign.Keys, base, method, object, upload string, layout shoal.Layout, servers []string, exp time.Time) string {
	return GatewayURLAs(keys, base, method, object, upload, "", layout, servers, exp)
}

// GatewayURLAs is GatewayURL made for principal (an ID, or "" for none):
// the URL names it (sign.ParamPrincipal) and its signature covers it.
func GatewayURLAs(keys *sign.Keys, base, method, object, upload, principal string, layout shoal.Layout, servers []string, exp time.Time) string {
	return gatewayURL(keys, base, method, object, upload, principal, layout, servers, sign.NoLimit, exp)
}

// GatewayPutURLAs is GatewayURLAs for a PUT of at most max bytes (the
// user's bytes, before encoding; sign.NoLimit: unbounded): the URL names
// the bound (sign.ParamMax), its signature covers it, and the gw stops
// the upload there.
func GatewayPutURLAs(keys *sign.Keys, base, object, upload, principal string, layout shoal.Layout, servers []string, max int64, exp time.Time) string {
	return gatewayURL(keys, base, "PUT", object, upload, principal, layout, servers, max, exp)
}

// GatewayLimitURLAs is GatewayPutURLAs signed for method (a third-party
// pull, which writes like a PUT: tpc.SignedMethod).
func GatewayLimitURLAs(keys *sign.Keys, base, method, object, upload, principal string, layout shoal.Layout, servers []string, max int64, exp time.Time) string {
	return gatewayURL(keys, base, method, object, upload, principal, layout, servers, max, exp)
}

func gatewayURL(keys *sign.Keys, base, method, object, upload, principal string, layout shoal.Layout, servers []string, max int64, exp time.Time) string {
	e := exp.Unix()
	kid, sig := keys.Sign(method, object, e, sign.WithPrincipal(sign.LimitExtra(gatewayExtra(upload, layout, servers), max), principal))
	q := url.Values{}
	q.Set(sign.ParamExpiry, strconv.FormatInt(e, 10))
	q.Set(sign.ParamKeyID, kid)
	q.Set(sign.ParamSig, sig)
	if upload != "" {
		q.Set(sign.ParamUpload, upload)
	}
	if principal != "" {
		q.Set(sign.ParamPrincipal, principal)
	}
	q.Set(ParamLayout, layout.String())
	q.Set(ParamServers, strings.Join(servers, ","))
	if max >= 0 {
		q.Set(sign.ParamMax, strconv.FormatInt(max, 10))
	}
	return strings.TrimRight(base, "/") + sign.ObjectPath(object) + "?" + q.Encode()
}

// GatewayRequest is a verified gw object request.
type GatewayRequest struct {
	Upload  string       // the upload a PUT commits to; empty: no commit
	Layout  shoal.Layout // ec:K+M, or replica:N for mirrored writes
	Servers []string     // data-server ids by shard (or copy) index
	Max     int64        // a PUT's most bytes (sign.ParamMax); sign.NoLimit without one
}

// VerifyGatewayURL checks a gw URL's query for method on object. A HEAD may use
// a URL signed for GET. Bad or missing signature: KindPermission (403);
// a server list of the wrong length for the layout (ec:K+M, or replica:N
// for md's mirrored writes), or with a repeated id: KindInvalid. An
// erasure-coded file's list may leave out (empty id) up to M-1 shards:
// those a degraded write did not place, keeping at least one parity.
func VerifyGatewayURL(keys *sign.Keys, method, object string, get func(string) string, now time.Time) (GatewayRequest, error) {
	const op = "wire.VerifyGatewayURL"
	r := GatewayRequest{Upload: get(sign.ParamUpload)}
	layoutS, srv := get(ParamLayout), get(ParamServers)
	extra := r.Upload + "|" + layoutS + "|" + srv
	if raw := get(sign.ParamMax); raw != "" {
		extra += "|max=" + raw // as signed; parsed once the signature holds
	}
	if err := keys.VerifyQuery(method, object, extra, get, now); err != nil {
		return GatewayRequest{}, err
	}
	var err error
	if r.Max, err = sign.ReadLimit(get); err != nil {
		return GatewayRequest{}, err
	}
	if r.Layout, err = shoal.ParseLayout(layoutS); err != nil {
		return GatewayRequest{}, err
	}
	r.Servers = strings.Split(srv, ",")
	if len(r.Servers) != r.Layout.Width() {
		return GatewayRequest{}, shoal.Errorf(op, shoal.KindInvalid, "%s needs %d servers, got %d", r.Layout, r.Layout.Width(), len(r.Servers))
	}
	seen := map[string]bool{}
	absent := 0
	for _, s := range r.Servers {
		if s == "" {
			absent++
			continue
		}
		if seen[s] {
			return GatewayRequest{}, shoal.Errorf(op, shoal.KindInvalid, "server list repeats %s", s)
		}
		seen[s] = true
	}
	if absent > 0 && (r.Layout.Kind != shoal.LayoutEC || absent >= r.Layout.M) {
		return GatewayRequest{}, shoal.Errorf(op, shoal.KindInvalid, "%s: %d shards without a server (at most %d may be left out, keeping one parity)",
			r.Layout, absent, max(r.Layout.M-1, 0))
	}
	return r, nil
}
