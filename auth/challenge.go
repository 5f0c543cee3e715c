package auth

import (
	"errors"

	"shoal"
)

// challenges are the WWW-Authenticate values, made once.
type challenges struct {
	plain, secure  []string // no credential offered or a bad Basic one
	badTokenPlain  []string // after a bad bearer token (RFC 6750 error="invalid_token")
	badTokenSecure []string
}

func newChallenges(realm string, basic bool) challenges {
	bearer := `Bearer realm="` + realm + `"`
	badBearer := `Bearer realm="` + realm + `", error="invalid_token"`
	c := challenges{
		plain:         []string{bearer},
		secure:        []string{bearer},
		badTokenPlain: []string{badBearer},
	}
	c.badTokenSecure = c.badTokenPlain
	if basic {
		b := `Basic realm="` + realm + `", charset="UTF-8"`
		c.secure = []string{bearer, b}
		c.badTokenSecure = []string{badBearer, b}
	}
	return c
}

// Challenges are the WWW-Authenticate header values of a 401 (one header
// each): Bearer always, Basic when users are configured and the
// connection is secure (TLS or loopback) so a password would not travel in
// clear. err is the authentication error, if any: after a bad bearer
// token the Bearer value says error="invalid_token". The slice is shared:
// do not modify it.
func (a *Auth) Challenges(secure bool, err error) []string {
	var e *shoal.Error
	bad := errors.As(err, &e) && e.Op == "token" && e.Kind == shoal.KindUnauthorized
	switch {
	case bad && secure:
		return a.chal.badTokenSecure
	case bad:
		return a.chal.badTokenPlain
	case secure:
		return a.chal.secure
	}
	return a.chal.plain
}
