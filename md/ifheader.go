package md

import (
	"strings"

	"shoal"
)

// ifCondition is one condition of an If header list (RFC 4918 10.4).
type ifCondition struct {
	not   bool
	token string // state token (lock token or e.g. DAV:no-lock), or
	etag  string // entity tag, quotes included
}

// ifList is one parenthesized list; tag is the clean path of its
// resource tag, "" for the Request-URI.
type ifList struct {
	tag   string
	conds []ifCondition
}

// parseIf parses an If header. KindInvalid if malformed.
func parseIf(h string) ([]ifList, error) {
	bad := shoal.Errorf("If", shoal.KindInvalid, "malformed If header")
	var lists []ifList
	tag := ""
	s := strings.TrimSpace(h)
	for len(s) > 0 {
		switch s[0] {
		case ' ', '\t':
			s = s[1:]
		case '<':
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return nil, bad
			}
			p, err := parseDestination([]byte(s[1:end]))
			if err != nil {
				return nil, bad
			}
			tag, s = p, s[end+1:]
		case '(':
			end := strings.IndexByte(s, ')')
			if end < 0 {
				return nil, bad
			}
			conds, err := parseConditions(s[1:end])
			if err != nil || len(conds) == 0 {
				return nil, bad
			}
			lists = append(lists, ifList{tag: tag, conds: conds})
			s = s[end+1:]
		default:
			return nil, bad
		}
	}
	if len(lists) == 0 {
		return nil, bad
	}
	return lists, nil
}

func parseConditions(s string) ([]ifCondition, error) {
	var out []ifCondition
	not := false
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			if not {
				return nil, errMalformed
			}
			return out, nil
		}
		switch {
		case len(s) >= 3 && strings.EqualFold(s[:3], "not"):
			not, s = true, s[3:]
		case s[0] == '<':
			end := strings.IndexByte(s, '>')
			if end <= 1 { // missing, or an empty state token
				return nil, errMalformed
			}
			out = append(out, ifCondition{not: not, token: s[1:end]})
			not, s = false, s[end+1:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end <= 1 { // missing, or an empty entity tag
				return nil, errMalformed
			}
			out = append(out, ifCondition{not: not, etag: s[1:end]})
			not, s = false, s[end+1:]
		default:
			return nil, errMalformed
		}
	}
}

var errMalformed = shoal.Errorf("If", shoal.KindInvalid, "malformed If header")

// tokens returns the state tokens the client submitted (RFC 4918 10.4.1:
// every token in the header counts, so a client proves it holds a lock).
func submittedTokens(lists []ifList) []string {
	var out []string
	for _, l := range lists {
		for _, c := range l.conds {
			if c.token != "" && !c.not {
				out = append(out, c.token)
			}
		}
	}
	return out
}
