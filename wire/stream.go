package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"shoal"
)

// A long admin operation (fsck, repair, drain, scrub) answers a request
// that accepts StreamType with one JSON object per line: progress lines
// while it runs, then exactly one result or error line. The status is 200
// once streaming starts, so a failure travels in the error line.
const StreamType = "application/x-ndjson"

// StreamLine is one line of a streamed answer; exactly one field is set.
type StreamLine struct {
	Progress json.RawMessage `json:"progress,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    *StreamError    `json:"error,omitempty"`
}

// StreamError is the error that ended a streamed operation: its kind (by
// name, as HeaderKind sends it), the HTTP status the kind maps to (for a
// reader that does not know the kind), and the reason.
type StreamError struct {
	Kind    string `json:"kind,omitempty"`
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// ErrorLine is the line for err.
func ErrorLine(err error) StreamLine {
	k := shoal.KindOf(err)
	return StreamLine{Error: &StreamError{Kind: k.String(), Status: k.Status(), Message: shoal.Reason(err)}}
}

// WriteLine writes one line and flushes it to the client.
func WriteLine(w *bufio.Writer, line StreamLine) error {
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	w.Write(b)
	w.WriteByte('\n')
	return w.Flush()
}

// Stream POSTs in to path asking for a streamed answer, calls progress
// with each progress line and decodes the result into out. c.Timeout
// bounds the wait for each line, not the operation: md sends progress at
// least every few seconds however long it runs. Cancelling ctx hangs up,
// which stops the operation in md.
func (c *Client) Stream(ctx context.Context, path string, in any, progress func(json.RawMessage), out any) error {
	const op = "wire.Stream"
	body, err := json.Marshal(in)
	if err != nil {
		return shoal.E(op, path, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+path, bytes.NewReader(body))
	if err != nil {
		return shoal.E(op, path, shoal.KindInvalid, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", StreamType)
	SignCall(c.Keys, http.MethodPost, path, body, callTTL).Set(req.Header.Set)

	idle := c.Timeout
	if idle == 0 {
		idle = 10 * time.Second
	}
	watchdog := time.AfterFunc(idle, cancel) // reset by every line
	defer watchdog.Stop()
	resp, err := c.streamClient().Do(req)
	if err != nil {
		return shoal.E(op, c.Base+path, shoal.KindUnavailable, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 256<<20) // a result lists every problem
	if resp.StatusCode >= 300 {
		var msg strings.Builder
		for sc.Scan() && msg.Len() < 4096 {
			msg.Write(sc.Bytes())
		}
		return ResponseError(op, path, resp.StatusCode, resp.Header.Get, []byte(msg.String()))
	}
	for sc.Scan() {
		watchdog.Reset(idle)
		var line StreamLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return shoal.Errorf(op, shoal.KindUnavailable, "%s: bad stream line: %v", path, err)
		}
		switch {
		case line.Error != nil:
			kind := func(string) string { return line.Error.Kind }
			return ResponseError(op, path, line.Error.Status, kind, []byte(line.Error.Message))
		case line.Result != nil:
			if out == nil {
				return nil
			}
			if err := json.Unmarshal(line.Result, out); err != nil {
				return shoal.E(op, path, err)
			}
			return nil
		case line.Progress != nil && progress != nil:
			progress(line.Progress)
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil && !watchdog.Stop() {
			return shoal.Errorf(op, shoal.KindTimeout, "%s: no word from md for %v", path, idle)
		}
		return shoal.E(op, path, shoal.KindUnavailable, err)
	}
	return shoal.Errorf(op, shoal.KindUnavailable, "%s: the answer ended before the operation's result", path)
}
