package sign

import (
	"strings"
	"testing"
)

// TestParseSecrets: keys separated by spaces or tabs, comments, the
// first key signing; a line of three words and a key id given twice are
// errors (a tab made "k1<TAB>hex" one secret of k0, a repeated id
// replaced the first without a word).
func TestParseSecrets(t *testing.T) {
	cur, s, err := parseSecrets(strings.NewReader("# rotation\nk2\tnew\n  k1   old  \n"))
	if err != nil || cur != "k2" || string(s["k2"]) != "new" || string(s["k1"]) != "old" || len(s) != 2 {
		t.Errorf("two keys, a tab and spaces: %q %q %v", cur, s, err)
	}
	cur, s, err = parseSecrets(strings.NewReader("justasecret\n"))
	if err != nil || cur != "k0" || string(s["k0"]) != "justasecret" {
		t.Errorf("a bare secret: %q %q %v", cur, s, err)
	}
	for _, bad := range []string{"k1 a b\n", "k1 a\nk1 b\n", "a\nb\n", "# nothing\n", ""} {
		if _, _, err := parseSecrets(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzParseSecrets: any file parses or is refused without panicking; a
// key it returns is the signing one's and has a secret without blanks.
func FuzzParseSecrets(f *testing.F) {
	for _, s := range []string{"k1 abc\n", "k2\tnew\nk1 old\n", "abc", "# c\n\n", "k1 a b", "k1 a\nk1 b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		cur, s, err := parseSecrets(strings.NewReader(in))
		if err != nil {
			return
		}
		if _, ok := s[cur]; !ok {
			t.Errorf("%q: signing key %q has no secret", in, cur)
		}
		for kid, sec := range s {
			if kid == "" || len(sec) == 0 || strings.ContainsAny(string(sec), " \t") {
				t.Errorf("%q: key %q secret %q", in, kid, sec)
			}
		}
	})
}
