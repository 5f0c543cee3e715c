package md

import (
	"bytes"
	"strings"
	"testing"
)

func TestOptionsAndRoot(t *testing.T) {
	e := newEnv(t, DataAuto)
	r := e.do("OPTIONS", "/", nil, nil)
	r.want(t, "OPTIONS", 200, "")
	if got := r.h.Get("DAV"); !strings.HasPrefix(got, "1") {
		t.Errorf("DAV header %q", got)
	}
	e.do("PROPFIND", "/", map[string]string{"Depth": "0"}, nil).want(t, "PROPFIND /", 207, "<D:collection/>")
	e.do("POST", "/x", nil, []byte("hello")).want(t, "POST", 405, "not supported")
}

func TestPutGetModes(t *testing.T) {
	for _, mode := range []string{DataProxy, DataRedirect, DataAuto} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, mode)
			small := []byte("tiny file")
			big := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB, not inline
			e.put("/small.txt", small).want(t, "PUT small", 201, "")
			created := e.put("/big.bin", big)
			created.want(t, "PUT big", 201, "")
			if r := e.get("/small.txt", nil); r.status != 200 || r.body != string(small) {
				t.Errorf("GET small: %d %q", r.status, r.body)
			}
			r := e.get("/big.bin", nil)
			if r.status != 200 || r.body != string(big) {
				t.Errorf("GET big: %d, %d bytes", r.status, len(r.body))
			}
			h := e.do("HEAD", "/big.bin", nil, nil)
			h.want(t, "HEAD big", 200, "")
			if h.h.Get("Content-Length") != "65536" {
				t.Errorf("HEAD Content-Length %q", h.h.Get("Content-Length"))
			}
			etag := h.h.Get("ETag")
			if c := created.h.Get("ETag"); c != etag {
				t.Errorf("the create's 201 gave ETag %q, HEAD %q", c, etag)
			}
			ow := e.put("/big.bin", bytes.ToUpper(big))
			ow.want(t, "overwrite", 204, "")
			// The 204 carries the new ETag in every mode (through a 307
			// it once had none: md's commit reply to the data server is a
			// 204, whose JSON body was dropped).
			if got := e.do("HEAD", "/big.bin", nil, nil).h.Get("ETag"); got == etag || got == "" || ow.h.Get("ETag") != got {
				t.Errorf("ETag after overwrite %q (its 204 said %q), before %q", got, ow.h.Get("ETag"), etag)
			}
			if r := e.get("/big.bin", nil); r.body != string(bytes.ToUpper(big)) {
				t.Errorf("GET after overwrite: wrong content")
			}
			e.put("/small.txt", []byte("other")).want(t, "overwrite small", 204, "")
		})
	}
}
