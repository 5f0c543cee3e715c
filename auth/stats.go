package auth

import (
	"sync/atomic"

	"shoal"
)

// Authentication methods and results counted by Stats (the labels of
// shoal_auth_total).
var (
	StatMethods = [...]string{"anonymous", "bearer", "basic"}
	StatResults = [...]string{"ok", "invalid", "denied"}
)

const (
	statAnonymous = iota
	statBearer
	statBasic
)

const (
	statOK      = iota
	statInvalid // a bad credential, or one that could not be checked (issuer keys unavailable)
	statDenied  // a valid principal refused by Authorize
)

// Stats are authentication counts by method and result, indexed like
// StatMethods and StatResults.
type Stats [len(StatMethods)][len(StatResults)]uint64

type counters [len(StatMethods)][len(StatResults)]atomic.Uint64

// Stats returns the counts so far.
func (a *Auth) Stats() Stats {
	var s Stats
	for m := range a.counts {
		for r := range a.counts[m] {
			s[m][r] = a.counts[m][r].Load()
		}
	}
	return s
}

func statMethod(p *shoal.Principal) int {
	switch p.Kind {
	case shoal.PrincipalToken:
		return statBearer
	case shoal.PrincipalUser:
		return statBasic
	}
	return statAnonymous
}
