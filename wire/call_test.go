package wire

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"shoal"
	"shoal/sign"
)

func TestCallAuth(t *testing.T) {
	keys := sign.Random()
	body := []byte(`{"id":"s1"}`)
	a := SignCall(keys, "POST", PathHeartbeat, body, time.Minute)
	h := http.Header{}
	a.Set(h.Set)
	got := ReadCallAuth(h.Get)
	g := NewReplayGuard()
	now := time.Now()
	if err := got.Verify(keys, "POST", PathHeartbeat, g, now); err != nil {
		t.Fatalf("a fresh call refused: %v", err)
	}
	if err := got.CheckBody(body); err != nil {
		t.Errorf("its body refused: %v", err)
	}
	if err := got.CheckBody([]byte(`{"id":"s2"}`)); !shoal.IsKind(err, shoal.KindPermission) {
		t.Errorf("another body accepted: %v", err)
	}
	// The finding: a signed call could be replayed within its expiry.
	if err := got.Verify(keys, "POST", PathHeartbeat, g, now); !shoal.IsKind(err, shoal.KindPermission) {
		t.Errorf("a replayed call: %v, want refused", err)
	}
	for name, bad := range map[string]CallAuth{
		"other path":     got,
		"no nonce":       {Kid: got.Kid, Exp: got.Exp, Sig: got.Sig, Digest: got.Digest},
		"changed nonce":  {Kid: got.Kid, Exp: got.Exp, Sig: got.Sig, Digest: got.Digest, Nonce: SignCall(keys, "POST", "/x", nil, time.Minute).Nonce},
		"changed digest": {Kid: got.Kid, Exp: got.Exp, Sig: got.Sig, Nonce: got.Nonce, Digest: sign.BodyDigest([]byte("x"))},
	} {
		path := PathHeartbeat
		if name == "other path" {
			path = PathCommit
		}
		if err := bad.Verify(keys, "POST", path, NewReplayGuard(), now); !shoal.IsKind(err, shoal.KindPermission) {
			t.Errorf("%s: %v, want refused", name, err)
		}
	}
}

// FuzzReadCallAuth: any header values are refused or accepted without a
// panic; only a call signed with the key is accepted.
func FuzzReadCallAuth(f *testing.F) {
	keys := sign.Random()
	good := SignCall(keys, "POST", PathCommit, []byte("{}"), time.Minute)
	f.Add(good.Kid, good.Exp, good.Sig, good.Nonce, good.Digest)
	f.Add("k0", "99999999999999999999", "zz", "", "")
	f.Add("", "-1", "", "00", "11")
	f.Fuzz(func(t *testing.T, kid, exp, sig, nonce, digest string) {
		a := ReadCallAuth(func(k string) string {
			return map[string]string{sign.HeaderKeyID: kid, sign.HeaderExpiry: exp, sign.HeaderSig: sig, sign.HeaderNonce: nonce, sign.HeaderDigest: digest}[k]
		})
		err := a.Verify(keys, "POST", PathCommit, NewReplayGuard(), time.Now())
		if err == nil && a != good {
			t.Fatalf("a call not made by SignCall was accepted: %+v", a)
		}
	})
}

// FuzzCommitRequest: any commit body md receives decodes into a commit
// with well-formed object ids and servers, or is refused; never a panic.
func FuzzCommitRequest(f *testing.F) {
	f.Add([]byte(`{"upload":"ab","size":3,"adler32":"0000abcd","md5":"kAFQmDzST7DWlj99KOF/cg==","replicas":[{"server":"s1","object":"0a","size":3,"sum":1}]}`))
	f.Add([]byte(`{"adler32":"zz"}`))
	f.Add([]byte(`{"replicas":[{"server":"","object":"../x"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var c CommitRequest
		if json.Unmarshal(body, &c) != nil {
			return
		}
		out, err := c.ToCommit()
		if err != nil {
			if !shoal.IsKind(err, shoal.KindInvalid) {
				t.Fatalf("ToCommit(%q): %v", body, err)
			}
			return
		}
		for _, r := range out.Replicas {
			if !shoal.ValidObjectID(r.Object) || r.Server == "" {
				t.Fatalf("ToCommit(%q) kept replica %+v", body, r)
			}
		}
	})
}
