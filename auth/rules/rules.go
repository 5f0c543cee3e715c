// Package rules is shoal's authorization rules: path prefix → who →
// rights, as the operator writes them in the YAML config (a list under
// auth.rules), compiled once and evaluated per request by md.
//
// Rules only grant: a principal's rights on a path are the union of the
// rights of every rule whose path holds it (on component boundaries: a
// rule on /foo covers /foo and /foo/x, never /foobar) and whose who names
// the principal. Capability tokens (with storage.* scopes) never reach the
// rules: their scopes alone decide (see package auth).
//
// The package must not import md, gw, diskserver or catalog.
package rules

import (
	"fmt"
	"strings"

	"shoal"
)

// Rule is one rule as configured.
//
//	auth:
//	  rules:
//	    - {path: /, who: anonymous, rights: [read]}
//	    - {path: /home/alice, who: "user:alice", rights: [read, create, modify]}
//	    - {path: /cms, who: "group:/cms", rights: [read]}
//	    - {path: /scratch, who: "issuer:https://iam.example.org/", rights: [read, create]}
type Rule struct {
	// Path is an absolute path; the rule covers it and everything below.
	Path string `mapstructure:"path" yaml:"path"`
	// Who is anonymous, authenticated (any user or token), user:NAME (a
	// local user), group:NAME (a user's group, or a token's wlcg.groups
	// entry such as /cms), or issuer:URL (any token of that issuer).
	Who string `mapstructure:"who" yaml:"who"`
	// Rights are read, create and modify (also "read,create" in one
	// string). modify includes create.
	Rights []string `mapstructure:"rights" yaml:"rights"`
}

type whoKind uint8

const (
	whoAnonymous whoKind = iota
	whoAuthenticated
	whoUser
	whoGroup
	whoIssuer
)

type compiled struct {
	path   string
	who    whoKind
	name   string // user, group or issuer
	rights shoal.Rights
}

// Rules are compiled rules. The zero value grants nothing.
type Rules struct {
	list []compiled
}

// Compile checks and compiles rules. Errors name the rule by its index
// (auth.rules[i]) and say what is wrong.
func Compile(rs []Rule) (*Rules, error) {
	out := &Rules{}
	for i, r := range rs {
		c, err := compile(r)
		if err != nil {
			return nil, fmt.Errorf("auth.rules[%d]: %w", i, err)
		}
		out.list = append(out.list, c)
	}
	return out, nil
}

// OpenAccess is the rule set of an embedded node on loopback with nothing
// configured: anonymous may do everything (today's `make run`).
func OpenAccess() *Rules {
	return &Rules{list: []compiled{{path: "/", who: whoAnonymous, rights: shoal.RightsAll}}}
}

func compile(r Rule) (compiled, error) {
	var c compiled
	p, err := cleanPath(r.Path)
	if err != nil {
		return c, fmt.Errorf("path %q: %w", r.Path, err)
	}
	c.path = p
	who := strings.TrimSpace(r.Who)
	kind, name, _ := strings.Cut(who, ":")
	switch {
	case who == "anonymous":
		c.who = whoAnonymous
	case who == "authenticated":
		c.who = whoAuthenticated
	case kind == "user" && name != "":
		c.who, c.name = whoUser, name
	case kind == "group" && name != "":
		c.who, c.name = whoGroup, name
	case kind == "issuer" && name != "":
		if !strings.HasPrefix(name, "https://") && !strings.HasPrefix(name, "http://") {
			return c, fmt.Errorf("who %q: issuer must be a URL (issuer:https://…)", r.Who)
		}
		c.who, c.name = whoIssuer, name
	default:
		return c, fmt.Errorf("who %q: want anonymous, authenticated, user:NAME, group:NAME or issuer:URL", r.Who)
	}
	for _, field := range r.Rights {
		for _, name := range strings.FieldsFunc(field, func(c rune) bool { return c == ',' || c == ' ' }) {
			switch name {
			case "read":
				c.rights |= shoal.RightRead
			case "create":
				c.rights |= shoal.RightCreate
			case "modify":
				c.rights |= shoal.RightModify
			default:
				return c, fmt.Errorf("right %q: want read, create or modify", name)
			}
		}
	}
	if c.rights == shoal.RightsNone {
		return c, fmt.Errorf("no rights (rules only grant: leave the rule out)")
	}
	return c, nil
}

// cleanPath checks an absolute rule path and drops repeated and trailing
// slashes.
func cleanPath(p string) (string, error) {
	if p == "" || p[0] != '/' {
		return "", fmt.Errorf("must be absolute")
	}
	var b strings.Builder
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" {
			continue
		}
		if seg == "." || seg == ".." {
			return "", fmt.Errorf("%q segments are not allowed", seg)
		}
		b.WriteByte('/')
		b.WriteString(seg)
	}
	if b.Len() == 0 {
		return "/", nil
	}
	return b.String(), nil
}

// Rights is the union of what the rules grant p on path (clean). It does
// not allocate.
func (rs *Rules) Rights(p *shoal.Principal, path string) shoal.Rights {
	var r shoal.Rights
	for i := range rs.list {
		c := &rs.list[i]
		if r&c.rights == c.rights || !shoal.IsWithin(path, c.path) || !c.matches(p) {
			continue
		}
		r |= c.rights
	}
	return r
}

func (c *compiled) matches(p *shoal.Principal) bool {
	switch c.who {
	case whoAnonymous:
		return p.Kind == shoal.PrincipalAnonymous
	case whoAuthenticated:
		return p.Kind != shoal.PrincipalAnonymous
	case whoUser:
		return p.Kind == shoal.PrincipalUser && p.Name == c.name
	case whoGroup:
		return p.Kind != shoal.PrincipalAnonymous && p.InGroup(c.name)
	case whoIssuer:
		return p.Kind == shoal.PrincipalToken && p.Issuer == c.name
	}
	return false
}

// AnonymousRights is what anonymous gets anywhere (the union over every
// anonymous rule): md's "secure by default" start check refuses a
// network-facing node with no credentials configured unless the operator
// granted anonymous something explicitly.
func (rs *Rules) AnonymousRights() shoal.Rights {
	var r shoal.Rights
	for _, c := range rs.list {
		if c.who == whoAnonymous {
			r |= c.rights
		}
	}
	return r
}

// Len is the number of rules.
func (rs *Rules) Len() int { return len(rs.list) }
