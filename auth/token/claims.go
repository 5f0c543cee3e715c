package token

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// Profile is the token profile a token declares: WLCG Common JWT Profile
// (wlcg.ver) or SciTokens (ver: scitokens:2.0).
type Profile uint8

const (
	ProfileWLCG Profile = iota + 1
	ProfileSciTokens
)

func (p Profile) String() string {
	switch p {
	case ProfileWLCG:
		return "wlcg"
	case ProfileSciTokens:
		return "scitokens"
	}
	return "unknown"
}

// The audiences that stand for "any service" in each profile.
const (
	AnyAudienceWLCG      = "https://wlcg.cern.ch/jwt/v1/any"
	AnyAudienceSciTokens = "ANY"
)

// claims are the JWT claims shoal reads. Unknown claims are ignored.
type claims struct {
	Issuer    string           `json:"iss"`
	Subject   string           `json:"sub"`
	Audience  jwt.Audience     `json:"aud"`
	Expiry    *jwt.NumericDate `json:"exp"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	Scope     string           `json:"scope"`
	WLCGVer   string           `json:"wlcg.ver"`
	Ver       string           `json:"ver"`
	Groups    []string         `json:"wlcg.groups"`
}

// profile tells which profile the claims follow: wlcg.ver with major 1,
// or ver scitokens:2.0; anything else is not a token shoal accepts.
func (c *claims) profile() (Profile, error) {
	switch {
	case c.WLCGVer != "":
		major, _, _ := strings.Cut(c.WLCGVer, ".")
		if major != "1" {
			return 0, fmt.Errorf("wlcg.ver %.20q is not version 1", c.WLCGVer)
		}
		return ProfileWLCG, nil
	case c.Ver == "scitokens:2.0":
		return ProfileSciTokens, nil
	case c.Ver != "":
		return 0, fmt.Errorf("ver %.30q is not scitokens:2.0", c.Ver)
	}
	return 0, fmt.Errorf("neither wlcg.ver nor a SciTokens ver claim")
}

// checkTimes applies exp (required, strict), nbf and iat (each with
// leeway for clocks that differ).
func (c *claims) checkTimes(now time.Time, leeway time.Duration) error {
	if c.Expiry == nil {
		return fmt.Errorf("no exp claim")
	}
	if !now.Before(c.Expiry.Time()) {
		return fmt.Errorf("token expired")
	}
	if c.NotBefore != nil && now.Add(leeway).Before(c.NotBefore.Time()) {
		return fmt.Errorf("token not valid yet (nbf)")
	}
	if c.IssuedAt != nil && now.Add(leeway).Before(c.IssuedAt.Time()) {
		return fmt.Errorf("token issued in the future (iat)")
	}
	return nil
}

// checkAudience requires aud to hold one of the accepted audiences or the
// profile's "any" value.
func (c *claims) checkAudience(p Profile, accepted []string) error {
	if len(c.Audience) == 0 {
		return fmt.Errorf("no aud claim")
	}
	anyAud := AnyAudienceWLCG
	if p == ProfileSciTokens {
		anyAud = AnyAudienceSciTokens
	}
	if c.Audience.Contains(anyAud) {
		return nil
	}
	for _, a := range accepted {
		if c.Audience.Contains(a) {
			return nil
		}
	}
	return fmt.Errorf("aud is not this service")
}
