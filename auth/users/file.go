// Package users is shoal's local users: an htpasswd-style file of bcrypt
// hashes and groups, reloaded when it changes, checked against HTTP Basic
// credentials with the outcome cached so bcrypt never runs per request;
// and the edits behind `shoal admin user add|del|list`.
//
// The file, one user per line (blank lines and # comments ignored):
//
//	# NAME:BCRYPT-HASH[:GROUP,GROUP…]
//	alice:$2y$10$…:cms,atlas
//	bob:$2a$10$…
//
// NAME and GROUP are letters, digits and . _ - @ (a group may also hold /,
// as WLCG groups do: /cms/uscms); the hash is bcrypt ($2a$, $2b$ or $2y$,
// as htpasswd -B makes). The file holds hashes only, but keep it 0600.
//
// The package must not import md, gw, diskserver or catalog.
package users

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// User is one line of the users file.
type User struct {
	Name   string
	Hash   string // bcrypt
	Groups []string
}

const maxNameLen = 128

// ValidName reports whether s is a user name the file can hold.
func ValidName(s string) error { return checkName(s, "user name", false) }

// ValidGroup reports whether s is a group name the file can hold.
func ValidGroup(s string) error { return checkName(s, "group", true) }

func checkName(s, what string, slash bool) error {
	if s == "" || len(s) > maxNameLen {
		return fmt.Errorf("%s %q: 1 to %d characters", what, s, maxNameLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '.' || c == '_' || c == '-' || c == '@' || (slash && c == '/')
		if !ok {
			return fmt.Errorf("%s %q: only letters, digits and . _ - @%s", what, s, map[bool]string{true: " /", false: ""}[slash])
		}
	}
	return nil
}

func checkHash(h string) error {
	if !strings.HasPrefix(h, "$2a$") && !strings.HasPrefix(h, "$2b$") && !strings.HasPrefix(h, "$2y$") {
		return fmt.Errorf("not a bcrypt hash ($2a$, $2b$ or $2y$)")
	}
	if _, err := bcrypt.Cost([]byte(h)); err != nil {
		return fmt.Errorf("bad bcrypt hash: %v", err)
	}
	return nil
}

// Parse reads a users file. Errors name the line; a name listed twice is
// an error (which line would win is not obvious to a reader).
func Parse(data []byte) ([]User, error) {
	var out []User
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		u, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if first, dup := seen[u.Name]; dup {
			return nil, fmt.Errorf("line %d: user %q already on line %d", n, u.Name, first)
		}
		seen[u.Name] = n
		out = append(out, u)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func parseLine(line string) (User, error) {
	parts := strings.Split(line, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return User{}, fmt.Errorf("want NAME:HASH or NAME:HASH:GROUP,GROUP")
	}
	u := User{Name: parts[0], Hash: parts[1]}
	if err := ValidName(u.Name); err != nil {
		return User{}, err
	}
	if err := checkHash(u.Hash); err != nil {
		return User{}, fmt.Errorf("user %q: %w", u.Name, err)
	}
	if len(parts) == 3 {
		for _, g := range strings.Split(parts[2], ",") {
			if g = strings.TrimSpace(g); g == "" {
				continue
			}
			if err := ValidGroup(g); err != nil {
				return User{}, fmt.Errorf("user %q: %w", u.Name, err)
			}
			u.Groups = append(u.Groups, g)
		}
	}
	return u, nil
}

// header opens every file shoal writes, so a reader knows the format.
const header = `# shoal users file: one user per line, NAME:BCRYPT-HASH[:GROUP,GROUP...]
# Edit with 'shoal admin user add|del|list' (or htpasswd -B, then add groups).
# md rereads it when it changes. Keep it private (0600).
`

// Format writes users in the file's format, with a header comment.
func Format(users []User) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for _, u := range users {
		b.WriteString(u.Name)
		b.WriteByte(':')
		b.WriteString(u.Hash)
		if len(u.Groups) > 0 {
			b.WriteByte(':')
			b.WriteString(strings.Join(u.Groups, ","))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}
