package dav

import (
	"strings"

	"shoal"
)

// IfCondition is one condition of an If header list (RFC 4918 10.4).
type IfCondition struct {
	Not   bool
	Token string // state token (lock token or e.g. DAV:no-lock), or
	ETag  string // entity tag, quotes included
}

// IfList is one parenthesized list; Tag is the clean path of its
// resource tag, "" for the Request-URI.
type IfList struct {
	Tag   string
	Conds []IfCondition
}

// ErrMalformedIf is ParseIf's error for any malformed If header.
var ErrMalformedIf = shoal.Errorf("If", shoal.KindInvalid, "malformed If header")

// ParseIf parses an If header. ErrMalformedIf (KindInvalid) if malformed.
// A resource tag is read as a Destination is (ParseDestination): the
// caller refuses the paths it reserves.
func ParseIf(h string) ([]IfList, error) {
	var lists []IfList
	tag := ""
	s := strings.TrimSpace(h)
	for len(s) > 0 {
		switch s[0] {
		case ' ', '\t':
			s = s[1:]
		case '<':
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return nil, ErrMalformedIf
			}
			p, err := ParseDestination([]byte(s[1:end]))
			if err != nil {
				return nil, ErrMalformedIf
			}
			tag, s = p, s[end+1:]
		case '(':
			end := strings.IndexByte(s, ')')
			if end < 0 {
				return nil, ErrMalformedIf
			}
			conds, err := parseConditions(s[1:end])
			if err != nil || len(conds) == 0 {
				return nil, ErrMalformedIf
			}
			lists = append(lists, IfList{Tag: tag, Conds: conds})
			s = s[end+1:]
		default:
			return nil, ErrMalformedIf
		}
	}
	if len(lists) == 0 {
		return nil, ErrMalformedIf
	}
	return lists, nil
}

func parseConditions(s string) ([]IfCondition, error) {
	var out []IfCondition
	not := false
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			if not {
				return nil, ErrMalformedIf
			}
			return out, nil
		}
		switch {
		case len(s) >= 3 && strings.EqualFold(s[:3], "not"):
			not, s = true, s[3:]
		case s[0] == '<':
			end := strings.IndexByte(s, '>')
			if end <= 1 { // missing, or an empty state token
				return nil, ErrMalformedIf
			}
			out = append(out, IfCondition{Not: not, Token: s[1:end]})
			not, s = false, s[end+1:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end <= 1 { // missing, or an empty entity tag
				return nil, ErrMalformedIf
			}
			out = append(out, IfCondition{Not: not, ETag: s[1:end]})
			not, s = false, s[end+1:]
		default:
			return nil, ErrMalformedIf
		}
	}
}

// SubmittedTokens returns the state tokens the client submitted (RFC 4918
// 10.4.1: every token in the header counts, so a client proves it holds a
// lock).
func SubmittedTokens(lists []IfList) []string {
	var out []string
	for _, l := range lists {
		for _, c := range l.Conds {
			if c.Token != "" && !c.Not {
				out = append(out, c.Token)
			}
		}
	}
	return out
}
