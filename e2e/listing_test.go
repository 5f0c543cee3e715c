package e2e

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMillionEntryListing: a directory of 1,000,000 files (loaded in bulk
// with `shoal admin populate`, before `shoal all` starts) is listed by
// PROPFIND Depth 1 as a stream: chunked, well-formed XML that
// encoding/xml reads to the end, every child once and in order, while
// md's resident memory stays bounded (the listing is never built whole).
func TestMillionEntryListing(t *testing.T) {
	const files = 1_000_000
	data := t.TempDir()
	start := time.Now()
	out, code := run(t, data, nil, shoalBin, "admin", "populate", "--quiet", "--catalog", "sqlite:"+filepath.Join(data, "catalog.db"),
		"--prefix", "/big", "--files", strconv.Itoa(files), "--dirs", "1")
	if code != 0 {
		t.Fatalf("populate: exit %d\n%s", code, out)
	}
	t.Logf("populate: %v", time.Since(start).Round(time.Millisecond))
	n := startShoal(t, data)
	pid := n.cmd.Process.Pid
	rss0 := rssOf(t, pid)

	req, _ := http.NewRequest("PROPFIND", n.URL+"/big/d0000", strings.NewReader(
		`<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getcontentlength/><D:resourcetype/></D:prop></D:propfind>`))
	req.Header.Set("Depth", "1")
	start = time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 207 || res.ContentLength != -1 {
		t.Fatalf("PROPFIND Depth 1: status %d, Content-Length %d; want 207, streamed", res.StatusCode, res.ContentLength)
	}
	type response struct {
		Href   string `xml:"DAV: href"`
		Length string `xml:"DAV: propstat>prop>getcontentlength"`
	}
	d := xml.NewDecoder(bufio.NewReaderSize(res.Body, 64<<10))
	count, maxRSS := 0, rss0
	for {
		tok, err := d.Token()
		if err != nil {
			t.Fatalf("after %d responses: %v", count, err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Space == "DAV:" && se.Name.Local == "response" {
			var r response
			if err := d.DecodeElement(&r, &se); err != nil {
				t.Fatalf("response %d: %v", count, err)
			}
			want := "/big/d0000/"
			if count > 0 {
				want = fmt.Sprintf("/big/d0000/f%07d", count-1)
			}
			if r.Href != want || count > 0 && r.Length != "0" {
				t.Fatalf("response %d: href %q length %q, want %q length 0", count, r.Href, r.Length, want)
			}
			count++
			if count%100_000 == 0 {
				maxRSS = max(maxRSS, rssOf(t, pid))
			}
		}
		if ee, ok := tok.(xml.EndElement); ok && ee.Name.Local == "multistatus" {
			break
		}
	}
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		if cd, ok := tok.(xml.CharData); !ok || strings.TrimSpace(string(cd)) != "" {
			t.Errorf("content after </multistatus>: %#v", tok)
			break
		}
	}
	t.Logf("listed %d entries in %v; md RSS %d MiB before, at most %d MiB during", count, time.Since(start).Round(time.Millisecond), rss0>>20, maxRSS>>20)
	if count != files+1 {
		t.Errorf("%d responses, want %d", count, files+1)
	}
	// Built whole, the listing would hold hundreds of MiB.
	if grown := maxRSS - rss0; grown > 64<<20 {
		t.Errorf("md's RSS grew by %d MiB during the listing, want a bounded stream (≤ 64 MiB)", grown>>20)
	}
}

// rssOf is the resident set size of process pid, in bytes.
func rssOf(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
