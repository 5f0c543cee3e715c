package md

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// hops is what a client sees of a GET, following md's 302 to the data
// server if there is one: the final status, body and headers, and the
// entity headers md sent on whichever hop carried them.
type hops struct {
	status     int
	redirected bool
	body       []byte
	h          http.Header // the final answer's
	etag       string      // first hop's, else the final one's
	digest     string
}

func (e *env) getHops(path string, hdr map[string]string) hops {
	e.t.Helper()
	r := e.do("GET", path, hdr, nil)
	out := hops{etag: r.h.Get("ETag"), digest: r.h.Get("Digest")}
	if r.status == http.StatusFound {
		out.redirected = true
		r = e.do("GET", r.h.Get("Location"), hdr, nil)
		if out.etag == "" {
			out.etag = r.h.Get("ETag")
		}
		if out.digest == "" {
			out.digest = r.h.Get("Digest")
		}
	}
	out.status, out.body, out.h = r.status, []byte(r.body), r.h
	return out
}

// parts reads a multipart/byteranges body: each part's Content-Range and
// bytes.
func parts(t *testing.T, h hops) []string {
	t.Helper()
	_, params, err := mime.ParseMediaType(h.h.Get("Content-Type"))
	if err != nil {
		t.Fatalf("multipart Content-Type %q: %v", h.h.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(bytes.NewReader(h.body), params["boundary"])
	var out []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		out = append(out, p.Header.Get("Content-Range")+" "+fmt.Sprintf("%x", b))
	}
}

// TestLocalServingMatchesRedirect: md serving its own data server's file
// (shoal all's local data) answers a GET exactly as a client following
// the redirect sees it — Range (one, several, suffix, open, unsatisfiable,
// malformed), ETag, Want-Digest and the conditional headers — without the
// redirect, and without the data server seeing the request.
func TestLocalServingMatchesRedirect(t *testing.T) {
	data := make([]byte, 200_001)
	rand.Read(data)
	redirect := newEnvLocal(t, DataRedirect, false)
	local := newEnvLocal(t, DataRedirect, true)
	for _, e := range []*env{redirect, local} {
		e.put("/f.bin", data).want(t, "PUT", 201, "")
	}
	n := len(data)
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	past := time.Unix(1_000_000_000, 0).UTC().Format(http.TimeFormat)
	cases := []struct {
		name string
		hdr  map[string]string // "{etag}" stands for the file's ETag
	}{
		{"whole", nil},
		{"first bytes", map[string]string{"Range": "bytes=0-99"}},
		{"middle", map[string]string{"Range": "bytes=1000-65535"}},
		{"open", map[string]string{"Range": fmt.Sprintf("bytes=%d-", n-10)}},
		{"suffix", map[string]string{"Range": "bytes=-100"}},
		{"past the end", map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", n-5, n+100)}},
		{"several", map[string]string{"Range": "bytes=0-0,10-19,-5"}},
		{"unsatisfiable", map[string]string{"Range": fmt.Sprintf("bytes=%d-", n)}},
		{"malformed", map[string]string{"Range": "bytes=5-2"}},
		{"other unit", map[string]string{"Range": "items=0-1"}},
		{"want adler32", map[string]string{"Want-Digest": "adler32"}},
		{"want md5 and adler32", map[string]string{"Want-Digest": "md5;q=0.3, adler32;q=0.9"}},
		{"want digest with range", map[string]string{"Want-Digest": "md5", "Range": "bytes=0-9"}},
		{"if-none-match same", map[string]string{"If-None-Match": "{etag}"}},
		{"if-none-match other", map[string]string{"If-None-Match": `"1-1"`}},
		{"if-match same", map[string]string{"If-Match": "{etag}", "Range": "bytes=5-9"}},
		{"if-match other", map[string]string{"If-Match": `"1-99"`}},
		{"if-modified-since future", map[string]string{"If-Modified-Since": future}},
		{"if-modified-since past", map[string]string{"If-Modified-Since": past}},
		{"if-unmodified-since past", map[string]string{"If-Unmodified-Since": past}},
	}
	for _, c := range cases {
		var got [2]hops
		for i, e := range []*env{redirect, local} {
			etag := e.do("HEAD", "/f.bin", nil, nil).h.Get("ETag")
			hdr := map[string]string{}
			for k, v := range c.hdr {
				hdr[k] = strings.ReplaceAll(v, "{etag}", etag)
			}
			got[i] = e.getHops("/f.bin", hdr)
			if got[i].status < 300 && got[i].etag != etag {
				t.Errorf("%s: env %d: ETag %q, want %q", c.name, i, got[i].etag, etag)
			}
		}
		r, l := got[0], got[1]
		if l.redirected {
			t.Errorf("%s: local serving redirected", c.name)
		}
		if r.status != l.status {
			t.Errorf("%s: status %d through the redirect, %d served locally", c.name, r.status, l.status)
			continue
		}
		if r.h.Get("Content-Range") != l.h.Get("Content-Range") {
			t.Errorf("%s: Content-Range %q through the redirect, %q served locally", c.name, r.h.Get("Content-Range"), l.h.Get("Content-Range"))
		}
		if r.digest != l.digest {
			t.Errorf("%s: Digest %q through the redirect, %q served locally", c.name, r.digest, l.digest)
		}
		if strings.HasPrefix(r.h.Get("Content-Type"), "multipart/") {
			if rp, lp := parts(t, r), parts(t, l); strings.Join(rp, "\n") != strings.Join(lp, "\n") || len(rp) != 3 {
				t.Errorf("%s: parts %v through the redirect, %v served locally", c.name, rp, lp)
			}
		} else if r.status < 300 && !bytes.Equal(r.body, l.body) {
			t.Errorf("%s: bodies differ (%d bytes through the redirect, %d locally)", c.name, len(r.body), len(l.body))
		}
		if l.status == 200 && !bytes.Equal(l.body, data) || l.status == 206 && l.h.Get("Accept-Ranges") != "bytes" {
			t.Errorf("%s: local answer %d with %d bytes, Accept-Ranges %q", c.name, l.status, len(l.body), l.h.Get("Accept-Ranges"))
		}
		t.Logf("%s: %d %q", c.name, l.status, l.h.Get("Content-Range"))
	}
	if strings.Contains(local.dsLogs.String(), "method=GET") {
		t.Errorf("the local data server was asked for a GET:\n%s", local.dsLogs)
	}
	if !strings.Contains(redirect.dsLogs.String(), "method=GET") {
		t.Errorf("the redirecting setup's data server saw no GET (the comparison compared nothing)")
	}
}

// TestLocalPut: with the local store, md writes an upload placed on its
// own data server itself (no 307, whatever the data mode and Expect),
// durable and committed as a data server's would be: 201 then 204 with
// the new ETag, conditions and quotas checked (412, 507, nothing left
// behind, reservations given back), chunked bodies too.
func TestLocalPut(t *testing.T) {
	for _, mode := range []string{DataRedirect, DataAuto, DataProxy} {
		t.Run(mode, func(t *testing.T) {
			e := newEnvLocal(t, mode, true)
			ctx := context.Background()
			data := make([]byte, 300_000)
			rand.Read(data)
			r := e.do("PUT", "/f", map[string]string{"Expect": "100-continue"}, data)
			r.want(t, "PUT with Expect", 201, "")
			if r.h.Get("ETag") == "" {
				t.Errorf("PUT: no ETag")
			}
			e.do("PUT", "/f", nil, data[:100_000]).want(t, "overwrite", 204, "")
			g := e.getHops("/f", nil)
			if g.redirected || g.status != 200 || !bytes.Equal(g.body, data[:100_000]) {
				t.Errorf("GET after overwrite: %d redirected %v, %d bytes", g.status, g.redirected, len(g.body))
			}
			if g.etag != e.do("HEAD", "/f", nil, nil).h.Get("ETag") {
				t.Errorf("GET ETag %q differs from HEAD's", g.etag)
			}
			e.do("MKCOL", "/d", nil, nil).want(t, "MKCOL", 201, "")
			before := e.snapshot()
			// Without Expect, a body this small is written and staged
			// before its commit refuses it (planPut skips its reads); with
			// it, planPut refuses before the body is sent. Same answers.
			for _, expect := range []string{"", "100-continue"} {
				h := func(k, v string) map[string]string {
					m := map[string]string{}
					if k != "" {
						m[k] = v
					}
					if expect != "" {
						m["Expect"] = expect
					}
					return m
				}
				e.do("PUT", "/f", h("If-None-Match", "*"), data).want(t, "create-only over a file", 412, "")
				e.do("PUT", "/f", h("If-Match", `"1-99"`), data).want(t, "If-Match other", 412, "")
				e.do("PUT", "/nodir/f", h("", ""), data).want(t, "no parent", 409, "")
				e.do("PUT", "/f/under", h("", ""), data).want(t, "parent is a file", 409, "")
				e.do("PUT", "/d", h("", ""), data).want(t, "a collection", 409, "is a collection")
			}
			if after := e.snapshot(); after != before {
				t.Errorf("refused PUTs changed something:\nbefore %s\nafter %s", before, after)
			}

			// Chunked (no Content-Length).
			req, _ := http.NewRequest("PUT", e.url+"/chunked", io.MultiReader(bytes.NewReader(data), strings.NewReader("")))
			req.ContentLength = -1
			res, err := e.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 201 {
				t.Fatalf("chunked PUT: %d", res.StatusCode)
			}
			if g := e.getHops("/chunked", map[string]string{"Range": "bytes=-7"}); g.status != 206 || !bytes.Equal(g.body, data[len(data)-7:]) {
				t.Errorf("chunked file's tail: %d %x", g.status, g.body)
			}

			// A quota: over it 507, the reservation given back at once.
			e.do("MKCOL", "/q", nil, nil).want(t, "MKCOL", 201, "")
			if _, err := e.db.SetQuota(ctx, "/q", 150_000, 0); err != nil {
				t.Fatal(err)
			}
			before = e.snapshot()
			// Up to 1 MiB the commit charges the quota (after the body is
			// staged); a larger body is reserved for first.
			e.do("PUT", "/q/big", nil, data).want(t, "PUT over quota", 507, "")
			e.do("PUT", "/q/huge", nil, make([]byte, 2<<20)).want(t, "PUT over quota, reserved first", 507, "")
			if after := e.snapshot(); after != before {
				t.Errorf("PUTs over the quota changed something:\nbefore %s\nafter %s", before, after)
			}
			e.do("PUT", "/q/ok", nil, data[:120_000]).want(t, "PUT within quota", 201, "")
			qs, err := e.db.QuotasFor(ctx, "/q/ok")
			if err != nil || len(qs) != 1 || qs[0].UsedBytes != 120_000 || qs[0].Reserved != 0 {
				t.Errorf("quota after the PUTs: %+v %v, want 120000 used, nothing reserved", qs, err)
			}
			if strings.Contains(e.dsLogs.String(), "method=PUT") {
				t.Errorf("the data server received a PUT:\n%s", e.dsLogs)
			}
		})
	}
}
