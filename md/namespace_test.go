package md

import (
	"strings"
	"testing"
)

func TestMkcol(t *testing.T) {
	e := newEnv(t, DataAuto)
	e.do("MKCOL", "/a", nil, nil).want(t, "MKCOL /a", 201, "")
	e.do("MKCOL", "/a/", nil, nil).want(t, "MKCOL existing (slash)", 405, "exists")
	e.do("MKCOL", "/a", nil, nil).want(t, "MKCOL existing", 405, "exists")
	e.do("MKCOL", "/b/c/", nil, nil).want(t, "MKCOL missing parent", 409, "")
	e.do("MKCOL", "/a/b/", nil, nil).want(t, "MKCOL with slash", 201, "")
	e.put("/f", []byte("x")).want(t, "PUT", 201, "")
	e.do("MKCOL", "/f/g", nil, nil).want(t, "MKCOL under a file", 409, "")
	before := e.snapshot()
	e.do("MKCOL", "/body", nil, []byte("<x/>")).want(t, "MKCOL with body", 415, "body")
	if e.snapshot() != before {
		t.Error("MKCOL with body changed the catalog")
	}
	for _, p := range []string{"/a", "/a/", "/a/b", "/a/b/"} {
		e.do("PROPFIND", p, map[string]string{"Depth": "0"}, nil).want(t, "PROPFIND "+p, 207, "<D:collection/>")
		e.do("HEAD", p, nil, nil).want(t, "HEAD "+p, 200, "")
	}
}

func TestPutErrors(t *testing.T) {
	e := newEnv(t, DataProxy)
	e.do("MKCOL", "/dir", nil, nil).want(t, "MKCOL", 201, "")
	e.put("/f", []byte("x")).want(t, "PUT", 201, "")
	before := e.snapshot()
	e.do("PUT", "/nope/f", nil, []byte("x")).want(t, "PUT into missing parent", 409, "parent")
	e.do("PUT", "/f/g", nil, []byte("x")).want(t, "PUT under a file", 409, "parent")
	e.do("PUT", "/dir", nil, []byte("x")).want(t, "PUT on a collection", 409, "collection")
	e.do("PUT", "/f", map[string]string{"If-None-Match": "*"}, []byte("y")).want(t, "If-None-Match on existing", 412, "")
	if e.snapshot() != before {
		t.Error("refused PUTs changed the catalog")
	}
	e.do("PUT", "/new", map[string]string{"If-None-Match": "*"}, []byte("y")).want(t, "If-None-Match new", 201, "")
}

func TestDelete(t *testing.T) {
	e := newEnv(t, DataProxy)
	e.do("MKCOL", "/d", nil, nil)
	e.do("MKCOL", "/d/e", nil, nil)
	e.put("/d/e/big", []byte(strings.Repeat("z", 10000))).want(t, "PUT", 201, "")
	e.put("/d/small", []byte("s")).want(t, "PUT", 201, "")
	e.do("DELETE", "/d", map[string]string{"Depth": "0"}, nil).want(t, "DELETE Depth 0", 400, "Depth")
	e.do("DELETE", "/d/", nil, nil).want(t, "DELETE", 204, "")
	e.do("HEAD", "/d/e/big", nil, nil).want(t, "HEAD after delete", 404, "")
	e.do("DELETE", "/d", nil, nil).want(t, "DELETE again", 404, "")
	e.do("DELETE", "/", nil, nil).want(t, "DELETE /", 403, "root")
}

func TestMoveCopy(t *testing.T) {
	e := newEnv(t, DataProxy)
	e.do("MKCOL", "/src", nil, nil)
	e.put("/src/a", []byte("aaa")).want(t, "PUT", 201, "")
	e.put("/src/big", []byte(strings.Repeat("b", 9000))).want(t, "PUT", 201, "")
	e.put("/other", []byte("o")).want(t, "PUT", 201, "")
	dst := func(p string) map[string]string { return map[string]string{"Destination": e.url + p} }

	e.do("COPY", "/src", dst("/copy"), nil).want(t, "COPY coll", 201, "")
	if r := e.get("/copy/big", nil); r.body != strings.Repeat("b", 9000) {
		t.Errorf("copied file: %d %d bytes", r.status, len(r.body))
	}
	e.do("COPY", "/src/a", map[string]string{"Destination": "/other"}, nil).want(t, "COPY overwrite (path form)", 204, "")
	if r := e.get("/other", nil); r.body != "aaa" {
		t.Errorf("overwritten copy: %q", r.body)
	}
	before := e.snapshot()
	e.do("COPY", "/src/a", map[string]string{"Destination": "/other", "Overwrite": "F"}, nil).want(t, "COPY Overwrite F", 412, "")
	e.do("COPY", "/src/a", map[string]string{"Destination": "/other", "Overwrite": "maybe"}, nil).want(t, "bad Overwrite", 400, "Overwrite")
	e.do("COPY", "/src/a", map[string]string{"Destination": "/missing/x"}, nil).want(t, "COPY missing parent", 409, "")
	e.do("MOVE", "/src", dst("/src"), nil).want(t, "MOVE to itself", 403, "same")
	e.do("MOVE", "/src", dst("/src/in"), nil).want(t, "MOVE into itself", 403, "inside")
	e.do("MOVE", "/src", nil, nil).want(t, "MOVE no Destination", 400, "Destination")
	e.do("MOVE", "/src", map[string]string{"Destination": "relative/x"}, nil).want(t, "relative Destination", 400, "Destination")
	e.do("MOVE", "/src", map[string]string{"Destination": "/a/../b"}, nil).want(t, "Destination with ..", 400, "")
	e.do("MOVE", "/src", map[string]string{"Destination": "/.shoal/commit"}, nil).want(t, "Destination reserved", 403, "")
	e.do("MOVE", "/src", map[string]string{"Destination": "/x", "Depth": "0"}, nil).want(t, "MOVE Depth 0", 400, "Depth")
	e.do("MOVE", "/nothing", dst("/x"), nil).want(t, "MOVE missing src", 404, "")
	if e.snapshot() != before {
		t.Error("refused MOVE/COPY changed the catalog")
	}
	e.do("MOVE", "/src", dst("/moved%20dir/"), nil).want(t, "MOVE coll", 201, "")
	e.do("HEAD", "/src/a", nil, nil).want(t, "moved away", 404, "")
	if r := e.get("/moved%20dir/big", nil); r.status != 200 || len(r.body) != 9000 {
		t.Errorf("moved file: %d %d bytes", r.status, len(r.body))
	}
	e.do("MOVE", "/moved%20dir/a", dst("/other"), nil).want(t, "MOVE overwrite", 204, "")

	// COPY Depth 0 of a collection: the collection, not its members.
	e.do("COPY", "/copy", map[string]string{"Destination": "/shallow", "Depth": "0"}, nil).want(t, "COPY Depth 0", 201, "")
	e.do("HEAD", "/shallow", nil, nil).want(t, "shallow copy exists", 200, "")
	e.do("HEAD", "/shallow/a", nil, nil).want(t, "shallow copy has no members", 404, "")
}
