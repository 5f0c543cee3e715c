package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"shoal"
)

// TestActivateAfterStalledDrain: on `shoal all --layout ec:2+1` over three
// data servers, a drain cannot move a shard anywhere; it gives up (exit 1)
// and leaves the server draining, so that every new write is refused
// (507: the pool needs all three). `shoal admin server activate` takes it
// back and writes work again. An unknown id and a retired server are
// refused, saying why.
func TestActivateAfterStalledDrain(t *testing.T) {
	n, secret := startECBox(t)
	admin := func(args ...string) (string, int) {
		return run(t, "", nil, shoalBin, append([]string{"admin", "--md", n.URL, "--secret-file", secret}, args...)...)
	}
	data := make([]byte, 300_000) // past the inline limit: shards on the three servers
	if r := putBody(n.URL+"/a", data, false); r.status != 201 {
		t.Fatalf("PUT /a: %s", r)
	}
	out, code := admin("--json", "servers")
	var servers []shoal.Server
	if err := json.Unmarshal([]byte(out), &servers); code != 0 || err != nil {
		t.Fatalf("admin --json servers: exit %d, %v:\n%s", code, err, out)
	}
	id := ""
	for _, s := range servers {
		if s.Pool != shoal.GatewayPool {
			id = s.ID
			break
		}
	}

	out, code = admin("--quiet", "drain", id)
	if code != 1 || !strings.Contains(out, "stays draining") || !strings.Contains(out, "shoal admin server activate "+id) {
		t.Fatalf("drain of one of ec:2+1's three servers: exit %d, want 1 saying it stays draining and how to undo it:\n%s", code, out)
	}
	if r := putBody(n.URL+"/b", data, false); r.status != 507 {
		t.Fatalf("PUT with a server draining: %s, want 507", r)
	}

	out, code = admin("server", "activate", "no-such-server")
	if code == 0 || !strings.Contains(out, `no server "no-such-server"`) {
		t.Errorf("activate of an unknown server: exit %d:\n%s", code, out)
	}
	out, code = admin("server", "activate", id)
	if code != 0 || !strings.Contains(out, "state active") {
		t.Fatalf("activate %s: exit %d:\n%s", id, code, out)
	}
	waitFor(t, 10*time.Second, "PUT 201 after activate", func() bool {
		return putBody(n.URL+"/b", data, false).status == 201
	})

	// Emptied, the server drains to retired, for good.
	for _, p := range []string{"/a", "/b"} {
		if r := do("DELETE", n.URL+p, ""); r.status != 204 {
			t.Fatalf("DELETE %s: %s", p, r)
		}
	}
	if out, code = admin("--quiet", "drain", id); code != 0 || !strings.Contains(out, "state retired") {
		t.Fatalf("drain of an empty server: exit %d:\n%s", code, out)
	}
	out, code = admin("server", "activate", id)
	if code == 0 || !strings.Contains(out, "is retired") {
		t.Errorf("activate of a retired server: exit %d, want refused saying it is retired:\n%s", code, out)
	}
}
