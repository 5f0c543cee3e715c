package bench

import (
	"os"
	"strings"

	"shoal"
)

// The PROPFIND bodies of real clients, by name, for `shoal bench stat
// --method PROPFIND --body NAME` and `shoal bench list --body NAME`.
var propfindBodies = map[string]string{
	"allprop": `<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`,
	// davix 0.8 (and gfal2 through it), stat and listing alike.
	"davix":    `<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:" xmlns:L="LCGDM:"><D:prop><D:displayname/><D:getlastmodified/><D:creationdate/><D:getcontentlength/><D:quota-used-bytes/><D:resourcetype><D:collection/></D:resourcetype><L:mode/><D:owner></D:owner><D:group></D:group></D:prop></D:propfind>`,
	"propname": `<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>`,
	// what sync tools and file managers ask for: live properties only.
	"props": `<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:getetag/></D:prop></D:propfind>`,
}

const propfindBodyHelp = "PROPFIND request body: allprop, davix, propname, props (named live properties), @FILE, or empty for none (an empty body means allprop)"

// PropfindBody is the body named by name (see propfindBodyHelp); nil for "".
func PropfindBody(name string) ([]byte, error) {
	if name == "" {
		return nil, nil
	}
	if f, ok := strings.CutPrefix(name, "@"); ok {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, shoal.E("bench", f, shoal.KindInvalid, err)
		}
		return b, nil
	}
	b, ok := propfindBodies[name]
	if !ok {
		return nil, shoal.Errorf("bench", shoal.KindInvalid, "--body %q: want allprop, davix, propname, props or @FILE", name)
	}
	return []byte(b), nil
}
