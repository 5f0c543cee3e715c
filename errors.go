package shoal

import (
	"errors"
	"fmt"
)

// Kind classifies an error so that every layer can react to it and the
// HTTP front ends can answer with the right status (see Kind.Status).
type Kind uint8

const (
	KindOther          Kind = iota // unclassified: an internal error (500)
	KindInvalid                    // malformed input: path, header, body (400)
	KindUnauthorized               // missing or bad credential (401)
	KindPermission                 // authenticated, but not allowed (403)
	KindNotFound                   // no such entry or object (404)
	KindNotAllowed                 // method not allowed on this resource, e.g. MKCOL on an existing path (405)
	KindExist                      // already exists where a create needs it absent (405 for MKCOL; see Status)
	KindConflict                   // parent missing or not a directory (409)
	KindPrecondition               // Overwrite: F or If-None-Match failed (412)
	KindTooLarge                   // body or name too large (413)
	KindURITooLong                 // path over the limit (414)
	KindUnsupported                // media type or feature not supported (415)
	KindBadRange                   // unsatisfiable Range (416)
	KindForbiddenDepth             // Depth: infinity refused (403, RFC 4918 9.1)
	KindUnavailable                // a backend (catalog, data servers) is down: retry later (503)
	KindInsufficient               // not enough space or servers for the layout (507)
	KindCorrupt                    // data failed its checksum (500, never served)
	KindIsDir                      // a file operation on a directory (409)
	KindNotDir                     // a directory operation on a file, or a file used as a parent (409)
	KindTimeout                    // the client was too slow (408)
	KindLocked                     // a WebDAV lock is held by someone else (423)
	KindTooMany                    // a per-client limit is reached: retry later (429)
	KindQuota                      // a directory quota has no room for the write (507, RFC 4331 DAV:quota-not-exceeded)
	KindBadGateway                 // another server a request names cannot be used for it, e.g. MOVE to a foreign Destination (502)
)

var kindNames = [...]string{
	KindOther:          "internal error",
	KindInvalid:        "invalid",
	KindUnauthorized:   "unauthorized",
	KindPermission:     "permission denied",
	KindNotFound:       "not found",
	KindNotAllowed:     "method not allowed",
	KindExist:          "already exists",
	KindConflict:       "conflict",
	KindPrecondition:   "precondition failed",
	KindTooLarge:       "too large",
	KindURITooLong:     "path too long",
	KindUnsupported:    "unsupported",
	KindBadRange:       "range not satisfiable",
	KindForbiddenDepth: "depth infinity not supported",
	KindUnavailable:    "unavailable",
	KindInsufficient:   "insufficient storage",
	KindCorrupt:        "corrupt data",
	KindIsDir:          "is a directory",
	KindNotDir:         "not a directory",
	KindTimeout:        "timeout",
	KindLocked:         "locked",
	KindTooMany:        "too many requests",
	KindQuota:          "quota exceeded",
	KindBadGateway:     "bad gateway",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// ParseKind returns the kind whose String is name: how a kind sent by
// name over HTTP (wire.HeaderKind) becomes a Kind again.
func ParseKind(name string) (Kind, bool) {
	for k, n := range kindNames {
		if n == name {
			return Kind(k), true
		}
	}
	return KindOther, false
}

// Status is the one mapping from error kinds to HTTP status codes, used by
// every HTTP server in shoal.
func (k Kind) Status() int {
	switch k {
	case KindInvalid:
		return 400
	case KindUnauthorized:
		return 401
	case KindPermission, KindForbiddenDepth:
		return 403
	case KindNotFound:
		return 404
	case KindNotAllowed, KindExist:
		return 405
	case KindTimeout:
		return 408
	case KindConflict, KindIsDir, KindNotDir:
		return 409
	case KindPrecondition:
		return 412
	case KindTooLarge:
		return 413
	case KindURITooLong:
		return 414
	case KindUnsupported:
		return 415
	case KindBadRange:
		return 416
	case KindLocked:
		return 423
	case KindTooMany:
		return 429
	case KindUnavailable:
		return 503
	case KindInsufficient, KindQuota:
		return 507
	case KindBadGateway:
		return 502
	default:
		return 500
	}
}

// Error is shoal's one error type: an operation, the path or object it
// concerned, a kind, and the underlying cause.
type Error struct {
	Op   string // e.g. "catalog.Stat", "PUT"
	Path string // user path or object id, if any
	Kind Kind
	Err  error // underlying error, may be nil
}

func (e *Error) Error() string {
	msg := e.Op
	if e.Path != "" {
		msg += " " + e.Path
	}
	msg += ": " + e.Kind.String()
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Reason is the short text sent to HTTP clients: the kind and the cause,
// without internal operation names.
func (e *Error) Reason() string {
	if e.Err != nil {
		if inner, ok := e.Err.(*Error); ok {
			return inner.Reason()
		}
		return e.Kind.String() + ": " + e.Err.Error()
	}
	return e.Kind.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, &Error{Kind: k}) match on kind alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Op == "" && t.Path == "" && t.Err == nil
}

// E builds an *Error. Arguments are taken by type: a Kind sets the kind, a
// string the path, an error the cause; op comes first. An error argument
// that is itself an *Error with no explicit kind given lends its kind.
func E(op string, args ...any) error {
	e := &Error{Op: op}
	kindSet := false
	for _, a := range args {
		switch v := a.(type) {
		case Kind:
			e.Kind = v
			kindSet = true
		case string:
			e.Path = v
		case error:
			e.Err = v
		case nil:
		default:
			panic(fmt.Sprintf("shoal.E: bad argument %T", a))
		}
	}
	if !kindSet {
		e.Kind = KindOf(e.Err)
	}
	return e
}

// Errorf is E with a formatted cause.
func Errorf(op string, kind Kind, format string, args ...any) error {
	return &Error{Op: op, Kind: kind, Err: fmt.Errorf(format, args...)}
}

// KindOf returns the kind of the outermost *Error in err's chain that has
// one, or KindOther.
func KindOf(err error) Kind {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return KindOther
		}
		if e.Kind != KindOther {
			return e.Kind
		}
		err = e.Err
	}
	return KindOther
}

// IsKind reports whether err has kind k.
func IsKind(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// Reason is the short client-facing text for any error.
func Reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason()
	}
	return KindOther.String()
}
