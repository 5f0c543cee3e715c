package auth

import (
	"fmt"

	"shoal"
)

// TPC tells a COPY that is a WLCG HTTP third-party copy from a plain one.
type TPC uint8

const (
	TPCNone TPC = iota // COPY within shoal: Path is the source, Destination the target
	TPCPull            // COPY with Source: Path is the local target the data is pulled into
	TPCPush            // COPY with a foreign Destination: Path is the local source
)

// Request is what md knows of a request when it asks for a decision.
// Paths are clean (shoal.CleanPath).
type Request struct {
	Method string // HEAD, GET, PROPFIND, PUT, MKCOL, DELETE, MOVE, COPY, PROPPATCH, LOCK, UNLOCK, OPTIONS
	Path   string
	// Exists: the target exists (PUT: an overwrite; COPY pull: likewise).
	Exists bool
	// Depth of a PROPFIND: 0 is a stat, 1 a listing.
	Depth int
	// Destination and DestExists: the target of a MOVE or a local COPY.
	Destination string
	DestExists  bool
	// TPC: what kind of COPY.
	TPC TPC
}

// Needs, each "any of these rights".
const (
	needStat   = shoal.RightRead | shoal.RightCreate | shoal.RightModify | shoal.RightStage
	needRead   = shoal.RightRead
	needCreate = shoal.RightCreate | shoal.RightModify // modify implies create
	needModify = shoal.RightModify
)

// Authorize decides whether p may make request r: nil to go ahead, or a
// *shoal.Error of KindUnauthorized (anonymous: answer 401 with
// Challenges) or KindPermission (403) whose Reason is one line saying
// which right on which path is missing. An allowed request costs no
// allocation.
//
// The method table (WLCG bearer token profile, applied to every
// principal): HEAD and PROPFIND Depth 0 need read, create or modify (or
// a token's stage); GET and PROPFIND Depth 1 need read; PUT of a new file
// and MKCOL need create or modify (a token may also MKCOL the parents of
// its create/modify scope paths); overwriting PUT and DELETE need modify;
// MOVE needs create or modify on the source and, on the target, create or
// modify if absent, modify if present; COPY needs read on the source and
// the same on the target; PROPPATCH, LOCK and UNLOCK need create or
// modify; OPTIONS needs nothing. Unknown methods need modify.
func (a *Auth) Authorize(p *shoal.Principal, r *Request) error {
	switch r.Method {
	case "OPTIONS":
		return nil
	case "HEAD":
		return a.need(p, r, r.Path, needStat)
	case "GET":
		return a.need(p, r, r.Path, needRead)
	case "PROPFIND":
		if r.Depth == 0 {
			return a.need(p, r, r.Path, needStat)
		}
		return a.need(p, r, r.Path, needRead)
	case "PUT":
		return a.need(p, r, r.Path, target(r.Exists))
	case "MKCOL":
		if p.IsCapability() && scopeBelow(p, r.Path) {
			return nil
		}
		return a.need(p, r, r.Path, needCreate)
	case "DELETE":
		return a.need(p, r, r.Path, needModify)
	case "MOVE":
		if err := a.need(p, r, r.Path, needCreate); err != nil {
			return err
		}
		return a.need(p, r, r.Destination, target(r.DestExists))
	case "COPY":
		switch r.TPC {
		case TPCPull:
			return a.need(p, r, r.Path, target(r.Exists))
		case TPCPush:
			return a.need(p, r, r.Path, needRead)
		}
		if err := a.need(p, r, r.Path, needRead); err != nil {
			return err
		}
		return a.need(p, r, r.Destination, target(r.DestExists))
	case "PROPPATCH", "LOCK", "UNLOCK":
		return a.need(p, r, r.Path, needCreate)
	}
	return a.need(p, r, r.Path, needModify)
}

// target is what writing to a path needs: create (or modify) when it is
// absent, modify when it would be replaced.
func target(exists bool) shoal.Rights {
	if exists {
		return needModify
	}
	return needCreate
}

// Rights is what p may do on path: its scopes if it is a capability token,
// else what the rules grant.
func (a *Auth) Rights(p *shoal.Principal, path string) shoal.Rights {
	if p.IsCapability() {
		var r shoal.Rights
		for i := range p.Scopes {
			if shoal.IsWithin(path, p.Scopes[i].Path) {
				r |= p.Scopes[i].Rights
			}
		}
		return r
	}
	return a.rules.Rights(p, path)
}

// scopeBelow reports whether a capability token may create below path:
// the WLCG create right includes making the missing parents of its path.
func scopeBelow(p *shoal.Principal, path string) bool {
	for i := range p.Scopes {
		if p.Scopes[i].Rights.Any(needCreate) && shoal.IsWithin(p.Scopes[i].Path, path) {
			return true
		}
	}
	return false
}

func (a *Auth) need(p *shoal.Principal, r *Request, path string, want shoal.Rights) error {
	if a.Rights(p, path).Any(want) {
		return nil
	}
	return a.refuse(p, r.Method, path, want)
}

func (a *Auth) refuse(p *shoal.Principal, method, path string, want shoal.Rights) error {
	a.counts[statMethod(p)][statDenied].Add(1)
	kind := shoal.KindPermission
	if p.Kind == shoal.PrincipalAnonymous {
		kind = shoal.KindUnauthorized
	}
	return &shoal.Error{Op: method, Path: path, Kind: kind, Err: fmt.Errorf("%s needs %s on %s; %s has not", method, needText(want), path, who(p))}
}

func needText(want shoal.Rights) string {
	switch want {
	case needStat:
		return "read, create or modify"
	case needCreate:
		return "create or modify"
	}
	return want.String()
}

// who names p in a refusal without its token or issuer details.
func who(p *shoal.Principal) string {
	switch {
	case p.Kind == shoal.PrincipalAnonymous:
		return "anonymous (no credentials)"
	case p.IsCapability():
		return "the token"
	}
	return p.ID
}
