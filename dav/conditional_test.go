package dav

import "testing"

// FuzzMatchETags: any If-Match / If-None-Match value is either refused as
// malformed or matches exactly when the target's ETag is listed (strongly,
// for If-Match) or the list is "*"; it never panics.
func FuzzMatchETags(f *testing.F) {
	for _, s := range []string{`*`, `"a-1"`, `W/"a-1"`, `"x", "a-1"`, `"a-1",`, `,,"a-1"`, `"a-1" "b"`, `abc`, `"`, `W/`, `""`, "\"a\x01\""} {
		f.Add(s)
	}
	const etag = `"a-1"`
	f.Fuzz(func(t *testing.T, list string) {
		strong, err1 := MatchETags([]byte(list), []byte(etag), true)
		weak, err2 := MatchETags([]byte(list), []byte(etag), false)
		absent, err3 := MatchETags([]byte(list), nil, false)
		if (err1 == nil) != (err2 == nil) || (err1 == nil) != (err3 == nil) {
			t.Fatalf("%q: validity differs: %v %v %v", list, err1, err2, err3)
		}
		if err1 != nil {
			return
		}
		if strong && !weak {
			t.Fatalf("%q: strong match without weak match", list)
		}
		if absent && list != "*" && trimSpaceString(list) != "*" {
			t.Fatalf("%q matched an absent target", list)
		}
		for _, tag := range IfMatchList([]byte(list)) {
			if tag != "*" && (len(tag) < 2 || tag[0] != '"' || tag[len(tag)-1] != '"') {
				t.Fatalf("%q: If-Match list kept %q", list, tag)
			}
		}
	})
}

func trimSpaceString(s string) string { return string(TrimSpace([]byte(s))) }
