package token

import (
	"fmt"
	"strings"

	"shoal"
)

// maxScopes bounds the scopes one token may carry: more is not a real
// issuer's token but someone probing the parser.
const maxScopes = 256

// parseScopes reads the space-separated scope claim of a token of the
// given profile into storage rights, with each path placed under base (the
// issuer's base path, clean). Scopes that are not about storage (openid,
// offline_access, compute.*) are ignored.
//
// WLCG profile: storage.read|create|modify|stage:PATH; a storage.* scope
// without a path makes the whole token invalid. SciTokens profile: also
// read:PATH and write:PATH (write is create and modify), with a missing
// path meaning the base path itself, as the SciTokens claims language
// says. A path with "." or ".." segments makes the token invalid (never
// normalised: "/a/.." must not become a grant on "/").
func parseScopes(claim string, profile Profile, base string) ([]shoal.Scope, error) {
	var out []shoal.Scope
	n := 0
	for _, s := range strings.Fields(claim) {
		if n++; n > maxScopes {
			return nil, fmt.Errorf("more than %d scopes", maxScopes)
		}
		name, path, hasPath := strings.Cut(s, ":")
		var r shoal.Rights
		switch name {
		case "storage.read":
			r = shoal.RightRead
		case "storage.create":
			r = shoal.RightCreate
		case "storage.modify":
			r = shoal.RightModify
		case "storage.stage":
			r = shoal.RightStage
		case "read", "write":
			if profile != ProfileSciTokens {
				continue
			}
			r = shoal.RightRead
			if name == "write" {
				r = shoal.RightCreate | shoal.RightModify
			}
			if !hasPath {
				path, hasPath = "/", true
			}
		default:
			if strings.HasPrefix(name, "storage.") && (!hasPath || path == "") {
				return nil, fmt.Errorf("scope %.40q has no path", name)
			}
			continue // not a storage right shoal knows
		}
		if !hasPath || path == "" {
			return nil, fmt.Errorf("scope %s has no path", name)
		}
		clean, err := cleanScopePath(path)
		if err != nil {
			return nil, fmt.Errorf("scope %s: %w", name, err)
		}
		out = append(out, shoal.Scope{Rights: r, Path: underBase(base, clean)})
	}
	return out, nil
}

// cleanScopePath checks an absolute scope path and returns it without
// repeated or trailing slashes. It refuses what could widen the grant.
func cleanScopePath(p string) (string, error) {
	if p[0] != '/' {
		return "", fmt.Errorf("path is not absolute")
	}
	if len(p) > shoal.MaxPathLen {
		return "", fmt.Errorf("path too long")
	}
	var b strings.Builder
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" {
			continue
		}
		if seg == "." || seg == ".." {
			return "", fmt.Errorf("path has a %q segment", seg)
		}
		for i := 0; i < len(seg); i++ {
			if c := seg[i]; c < 0x20 || c == 0x7f {
				return "", fmt.Errorf("control character in path")
			}
		}
		b.WriteByte('/')
		b.WriteString(seg)
	}
	if b.Len() == 0 {
		return "/", nil
	}
	return b.String(), nil
}

// underBase places a clean scope path under a clean base path.
func underBase(base, p string) string {
	switch {
	case base == "/" || base == "":
		return p
	case p == "/":
		return base
	default:
		return base + p
	}
}
