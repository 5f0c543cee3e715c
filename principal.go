package shoal

import "strings"

// PrincipalKind says how a request's principal was established.
type PrincipalKind uint8

const (
	PrincipalAnonymous PrincipalKind = iota // no credentials
	PrincipalUser                           // a local user, HTTP Basic
	PrincipalToken                          // a verified bearer token (WLCG or SciTokens)
)

func (k PrincipalKind) String() string {
	switch k {
	case PrincipalUser:
		return "user"
	case PrincipalToken:
		return "token"
	default:
		return "anonymous"
	}
}

// Rights is a set of rights on a path. Rules grant read, create and
// modify; tokens may also carry stage, which grants a stat only.
type Rights uint8

const (
	RightRead   Rights = 1 << iota // GET, listing, stat
	RightCreate                    // new files and collections (never overwrite or delete)
	RightModify                    // overwrite, delete, and everything create allows
	RightStage                     // stat only (storage.stage)

	RightsNone Rights = 0
	RightsAll         = RightRead | RightCreate | RightModify
)

// Has reports whether every right in want is in r.
func (r Rights) Has(want Rights) bool { return r&want == want }

// Any reports whether r holds at least one right of want.
func (r Rights) Any(want Rights) bool { return r&want != 0 }

func (r Rights) String() string {
	if r == RightsNone {
		return "none"
	}
	var parts []string
	for _, n := range [...]struct {
		r    Rights
		name string
	}{{RightRead, "read"}, {RightCreate, "create"}, {RightModify, "modify"}, {RightStage, "stage"}} {
		if r&n.r != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, ",")
}

// Scope is one right a capability token grants on a path and below it
// (matched on component boundaries, see IsWithin). Path is absolute in
// shoal's namespace: the issuer's base path is already applied.
type Scope struct {
	Rights Rights
	Path   string
}

// Principal is who makes a request. It is immutable once built: md, the
// caches and the logs share one value per credential.
type Principal struct {
	Kind PrincipalKind
	// ID names the principal in logs, lock ownership and signed URLs:
	// "anonymous", "user:NAME" or "token:SUBJECT@ISSUER". It never holds
	// a credential.
	ID string
	// Name is the user name, or the token's subject.
	Name string
	// Issuer is the token's issuer URL (tokens only).
	Issuer string
	// Groups are the user's groups from the users file, or the token's
	// wlcg.groups.
	Groups []string
	// Scopes are a capability token's storage rights. A token with scopes
	// gets exactly these; one without (a group token) gets what the rules
	// grant, like users and anonymous.
	Scopes []Scope
}

// Anonymous is the principal of a request without credentials.
var Anonymous = &Principal{Kind: PrincipalAnonymous, ID: "anonymous"}

// ClientOf names who asks, for limits counted per client (an upload's
// Client): a principal's ID, or "ip:ADDR" for anonymous, whose requests
// one address shares.
func ClientOf(principalID, addr string) string {
	if principalID != Anonymous.ID {
		return principalID
	}
	return anonymousClient + addr
}

// PrincipalOfClient is the principal ID a ClientOf name stands for.
func PrincipalOfClient(client string) string {
	if strings.HasPrefix(client, anonymousClient) {
		return Anonymous.ID
	}
	return client
}

const anonymousClient = "ip:"

// IsCapability reports whether the principal is a token whose storage
// scopes alone decide its rights.
func (p *Principal) IsCapability() bool { return p.Kind == PrincipalToken && len(p.Scopes) > 0 }

// InGroup reports whether the principal belongs to group g.
func (p *Principal) InGroup(g string) bool {
	for _, have := range p.Groups {
		if have == g {
			return true
		}
	}
	return false
}

func (p *Principal) String() string { return p.ID }
