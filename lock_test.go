package shoal

import "testing"

// Blocking: a writer passes a lock it holds, and a shared lock when it
// holds another on the same root; nothing else.
func TestBlocking(t *testing.T) {
	ex := Lock{Token: "t1", Root: "/a", Exclusive: true}
	sh1 := Lock{Token: "t2", Root: "/b"}
	sh2 := Lock{Token: "t3", Root: "/b"}
	other := Lock{Token: "t4", Root: "/c"}
	holding := func(tokens ...string) func(*Lock) bool {
		return func(l *Lock) bool {
			for _, t := range tokens {
				if l.Token == t {
					return true
				}
			}
			return false
		}
	}
	for _, tc := range []struct {
		name  string
		locks []Lock
		held  []string
		want  string // the blocking lock's token, "" for none
	}{
		{"no locks", nil, nil, ""},
		{"exclusive held", []Lock{ex}, []string{"t1"}, ""},
		{"exclusive not held", []Lock{ex}, nil, "t1"},
		{"shared, the other on its root held", []Lock{sh1, sh2}, []string{"t3"}, ""},
		{"shared, none held", []Lock{sh1, sh2}, nil, "t2"},
		{"shared held, another root not", []Lock{sh1, other}, []string{"t2"}, "t4"},
		{"exclusive beside a held shared one elsewhere", []Lock{sh1, ex}, []string{"t2"}, "t1"},
	} {
		got := Blocking(tc.locks, holding(tc.held...))
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: blocked by %s, want none", tc.name, got.Token)
		case tc.want != "" && (got == nil || got.Token != tc.want):
			t.Errorf("%s: blocked by %v, want %s", tc.name, got, tc.want)
		}
	}
}
