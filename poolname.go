package shoal

import "fmt"

// MaxPoolNameLen bounds a pool name: it is a config value (disk.pool), a
// metrics label and a column, not a place for text.
const MaxPoolNameLen = 64

// CheckPoolName says whether name may name a pool an operator creates or
// a data server joins: 1..MaxPoolNameLen bytes of ASCII letters, digits,
// '.', '_' and '-', starting with a letter or a digit, so it needs no
// quoting in a URL, a YAML file, a shell, a Prometheus label or a
// listing's columns, and is never "." or "..". GatewayPool is reserved:
// gws register in it, and md never places data on it. KindInvalid with
// the reason otherwise.
func CheckPoolName(name string) error {
	bad := func(why string) error {
		return Errorf("pool", KindInvalid, "pool name %q: %s", name, why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxPoolNameLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxPoolNameLen))
	case name == GatewayPool:
		return bad("reserved for the gws (they register in it; it holds no data)")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if i == 0 && !alnum {
			return bad("must start with a letter or a digit")
		}
		if !alnum && c != '.' && c != '_' && c != '-' {
			return bad("only letters, digits, '.', '_' and '-'")
		}
	}
	return nil
}
