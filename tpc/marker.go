package tpc

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The marker stream of a 202 answer: a block per marker, then one final
// line. Every line ends in "\n", none is empty (davix stops reading at an
// empty line and calls the outcome unknown), and each "Name: value" has
// exactly one space after its colon (davix skips one character there).

// Final lines.
const (
	SuccessLine   = "success: Created"
	failurePrefix = "failure: "
	// maxReason bounds a failure line (davix reads lines of up to 1 KiB).
	maxReason = 900
)

// AppendMarker appends one marker block: the time, the bytes moved so far
// and the remote connections ("tcp:IP:PORT", none: the line is left out).
func AppendMarker(b []byte, now time.Time, bytes int64, conns []string) []byte {
	b = append(b, "Perf Marker\nTimestamp: "...)
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, "\nStripe Index: 0\nStripe Bytes Transferred: "...)
	b = strconv.AppendInt(b, bytes, 10)
	b = append(b, "\nTotal Stripe Count: 1\n"...)
	if len(conns) > 0 {
		b = append(b, "RemoteConnections: "...)
		b = append(b, strings.Join(conns, ",")...)
		b = append(b, '\n')
	}
	return append(b, "End\n"...)
}

// FailureLine is the final line of a failed copy: "failure: " and the
// reason on one line, bounded.
func FailureLine(reason string) string {
	reason = strings.Join(strings.Fields(reason), " ")
	if reason == "" {
		reason = "internal error"
	}
	if len(reason) > maxReason {
		reason = reason[:maxReason] + "…"
	}
	return failurePrefix + reason
}

// Marker is one marker block as a client reads it.
type Marker struct {
	Timestamp   int64
	Bytes       int64
	Connections []string
}

// Outcome is a whole marker stream as a client reads it.
type Outcome struct {
	Markers []Marker
	Success bool
	Failure string // the reason after "failure:" (or "failed"/"aborted")
	Final   bool   // a success or failure line ended the stream
}

// ReadStream parses a marker stream as davix does: lines trimmed of
// leading space, names case-insensitive; it stops at the final line (or
// at an empty line, as davix does), and reports a stream that ends
// without a final line as not Final. Lines it does not know are errors:
// a stream shoal writes has none. onMarker, if set, is called at each
// block's End.
func ReadStream(r io.Reader, onMarker func(Marker)) (Outcome, error) {
	var out Outcome
	var cur *Marker
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t\r")
		line = strings.TrimRight(line, "\r")
		if line == "" {
			return out, nil
		}
		name, val, hasColon := strings.Cut(line, ":")
		switch {
		case strings.EqualFold(line, "Perf Marker"):
			if cur != nil {
				return out, fmt.Errorf("marker without End")
			}
			cur = &Marker{}
		case strings.EqualFold(line, "End"):
			if cur == nil {
				return out, fmt.Errorf("End outside a marker")
			}
			out.Markers = append(out.Markers, *cur)
			if onMarker != nil {
				onMarker(*cur)
			}
			cur = nil
		case hasColon && cur != nil:
			if !strings.HasPrefix(val, " ") || strings.HasPrefix(val, "  ") {
				return out, fmt.Errorf("%q: want exactly one space after the colon", line)
			}
			val = val[1:]
			var err error
			switch strings.ToLower(name) {
			case "timestamp":
				cur.Timestamp, err = strconv.ParseInt(val, 10, 64)
			case "stripe bytes transferred":
				cur.Bytes, err = strconv.ParseInt(val, 10, 64)
			case "stripe index", "total stripe count":
				_, err = strconv.Atoi(val)
			case "remoteconnections":
				if val != "" {
					cur.Connections = strings.Split(val, ",")
				}
			default:
				err = fmt.Errorf("unknown field")
			}
			if err != nil {
				return out, fmt.Errorf("%q: %v", line, err)
			}
		case cur == nil && hasPrefixFold(line, "success"):
			out.Success, out.Final = true, true
			return out, nil
		case cur == nil && (hasPrefixFold(line, "failure") || hasPrefixFold(line, "failed") || hasPrefixFold(line, "aborted")):
			out.Failure, out.Final = strings.TrimSpace(val), true
			if !hasColon {
				out.Failure = line
			}
			return out, nil
		default:
			return out, fmt.Errorf("unexpected line %q", line)
		}
	}
	return out, sc.Err()
}

func hasPrefixFold(s, p string) bool { return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) }
