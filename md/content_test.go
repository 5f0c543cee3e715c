package md

import (
	"strings"
	"testing"
)

// TestActiveContent: stored HTML, SVG, XHTML and JavaScript are served
// with Content-Security-Policy: sandbox (or as attachments), every answer
// of md and of the data server carries X-Content-Type-Options: nosniff,
// and with allowed hosts set md answers only under those names. The
// findings: uploaded .html/.svg were served with active types and no
// X-Content-Type-Options/CSP from the storage origin; md answered under
// any Host.
func TestActiveContent(t *testing.T) {
	for _, mode := range []string{ActiveSandbox, ActiveAttachment} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, DataProxy, func(o *Options) {
				o.ActiveContent = mode
				o.AllowedHosts = []string{"127.0.0.1", "storage.example.org"}
			})
			big := strings.Repeat("<script>alert(1)</script>", 400) // 10 kB: on the data server
			for _, name := range []string{"a.html", "a.svg", "a.xhtml", "a.js", "a.txt", "big.html"} {
				body := "<script>alert(1)</script>"
				if strings.HasPrefix(name, "big") {
					body = big
				}
				e.put("/"+name, []byte(body)).want(t, "PUT "+name, 201, "")
				for _, m := range []string{"GET", "HEAD"} {
					r := e.do(m, "/"+name, nil, nil)
					active := !strings.HasSuffix(name, ".txt")
					csp, disp := r.h.Get("Content-Security-Policy"), r.h.Get("Content-Disposition")
					switch {
					case r.h.Get("X-Content-Type-Options") != "nosniff":
						t.Errorf("%s %s: no nosniff", m, name)
					case active && mode == ActiveSandbox && csp != "sandbox":
						t.Errorf("%s %s (%s): Content-Security-Policy %q, want sandbox", m, name, r.h.Get("Content-Type"), csp)
					case active && mode == ActiveAttachment && disp != "attachment":
						t.Errorf("%s %s: Content-Disposition %q, want attachment", m, name, disp)
					case !active && (csp != "" || disp != ""):
						t.Errorf("%s %s: %q %q on a plain text file", m, name, csp, disp)
					}
				}
			}
			for _, u := range []string{e.url + "/missing", e.dsURL + "/obj/00"} {
				if r := e.do("GET", u, nil, nil); r.h.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("GET %s (%d): no nosniff", u, r.status)
				}
			}
			e.do("GET", "/a.txt", map[string]string{"Host": "evil.example.com"}, nil).want(t, "another Host", 400, "Host")
			e.do("GET", "/a.txt", map[string]string{"Host": "storage.example.org:8443"}, nil).want(t, "an allowed Host", 200, "")
		})
	}
}
