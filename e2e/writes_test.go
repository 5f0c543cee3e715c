package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"shoal"
	"shoal/diskserver"
)

// writer follows md's 307 to the data server (re-sending the body), as
// clients that upload do.
var writer = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64},
}

// put creates url with body; it returns the status, 0 for a transport
// error (the server went away).
func put(url string, body []byte) int {
	req, err := http.NewRequest("PUT", url, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("If-None-Match", "*")
	resp, err := writer.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// content is file i of client c: sizes cycling through inline (0, 100 B),
// a data server's 16 KiB and 200 KiB, each byte depending on c and i.
func content(c, i int) []byte {
	size := []int{0, 100, 16 << 10, 200 << 10}[i%4]
	b := make([]byte, size)
	for k := range b {
		b[k] = byte(c*31 + i*7 + k)
	}
	return b
}

// TestCreatesSurviveSIGKILL: sixteen clients create files as fast as
// shoal all takes them (group commit shares the catalog's transactions
// between them) until shoal all is killed with SIGKILL. After a restart
// every create that was answered 201 is there with its bytes exact, and
// a create that was not answered is there whole or not at all: a commit
// that answered before its batch was durable, or answered one member
// for another, shows here first.
func TestCreatesSurviveSIGKILL(t *testing.T) {
	data := t.TempDir()
	n := startShoal(t, data)
	if r := do("MKCOL", n.URL+"/kill", ""); r.status != 201 {
		t.Fatalf("MKCOL /kill: %v", r)
	}
	const clients = 16
	type outcome struct {
		acked   []int // files answered 201
		pending int   // the file in flight when the server died, -1 if none
		other   []string
	}
	outs := make([]outcome, clients)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for c := range clients {
		wg.Go(func() {
			o := &outs[c]
			o.pending = -1
			for i := 0; i < 2000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				st := put(fmt.Sprintf("%s/kill/c%02d-%04d", n.URL, c, i), content(c, i))
				switch st {
				case 201:
					o.acked = append(o.acked, i)
				case 0:
					o.pending = i // the kill: unknown whether it was made
					return
				default:
					o.other = append(o.other, fmt.Sprintf("file %d: %d", i, st))
				}
			}
		})
	}
	// Kill once a good number of creates went through, in the middle of
	// the load.
	deadline := time.Now().Add(20 * time.Second)
	for {
		total := 0
		for c := range outs {
			total += len(outs[c].acked) // racy read of a length: only a trigger
		}
		if total >= 300 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	n.signal(syscall.SIGKILL)
	<-n.exited
	close(stop)
	wg.Wait()

	total := 0
	for c, o := range outs {
		total += len(o.acked)
		for _, e := range o.other {
			t.Errorf("client %d: %s (want 201, or no answer once killed)", c, e)
		}
	}
	if total == 0 {
		t.Fatal("no create was answered before the kill")
	}
	n2 := startShoal(t, data)
	lost := 0
	for c, o := range outs {
		for _, i := range o.acked {
			url := fmt.Sprintf("%s/kill/c%02d-%04d", n2.URL, c, i)
			if got, ok := fetch(t, url); !ok || !bytes.Equal(got, content(c, i)) {
				lost++
				if lost <= 10 {
					t.Errorf("c%02d-%04d was answered 201 before the kill; after the restart: present %v, %d bytes (want %d)",
						c, i, ok, len(got), len(content(c, i)))
				}
			}
		}
		if o.pending >= 0 {
			url := fmt.Sprintf("%s/kill/c%02d-%04d", n2.URL, c, o.pending)
			if got, ok := fetch(t, url); ok && !bytes.Equal(got, content(c, o.pending)) {
				t.Errorf("c%02d-%04d, in flight at the kill, is there with %d bytes of %d: not whole", c, o.pending, len(got), len(content(c, o.pending)))
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged creates lost or changed by the kill", lost, total)
	}
	// Nothing else appeared: the listing holds the acknowledged files and
	// at most the one in flight per client.
	r := do("PROPFIND", n2.URL+"/kill/", "", "Depth", "1")
	listed := strings.Count(r.body, "<D:href>") + strings.Count(r.body, "<d:href>") - 1
	if r.status != 207 || listed < total || listed > total+clients {
		t.Errorf("PROPFIND /kill/ lists %d files (status %d), want %d to %d", listed, r.status, total, total+clients)
	}
	// No object leaked: what a crash left staged was published or removed
	// at the start, and objects/ holds one object per acknowledged file
	// with data, plus at most the ones in flight.
	withData := func(i int) bool { return len(content(0, i)) > 1024 }
	minObjects, maxObjects := 0, 0
	for _, o := range outs {
		for _, i := range o.acked {
			if withData(i) {
				minObjects++
			}
		}
		if o.pending >= 0 && withData(o.pending) {
			maxObjects++
		}
	}
	maxObjects += minObjects
	// Counted by the data server's own store once shoal all has stopped
	// (objects are files, or records in packs).
	if code := n2.stop(t); code != 0 {
		t.Fatalf("shoal all exit %d", code)
	}
	st, err := diskserver.NewStore([]string{filepath.Join(data, "disk")}, -1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	unpublished, err := st.Staged(ctx)
	if err != nil {
		t.Fatal(err)
	}
	objects := 0
	if err := st.Walk(ctx, func(shoal.ObjectInfo) error { objects++; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(unpublished) != 0 || objects < minObjects || objects > maxObjects {
		t.Errorf("after the restart: %d objects staged, %d published; want 0, and %d to %d", len(unpublished), objects, minObjects, maxObjects)
	}
	t.Logf("%d creates acknowledged before SIGKILL, all there after the restart; %s", total, stagedLine(n2.stderr.String()))
}

// stagedLine is md's log line about what a crash left staged, if any.
func stagedLine(log string) string {
	for l := range strings.Lines(log) {
		if strings.Contains(l, "left staged") {
			return l
		}
	}
	return "nothing was left staged"
}

// fetch GETs url following md's redirect; ok is false for a 404.
func fetch(t *testing.T, url string) ([]byte, bool) {
	t.Helper()
	resp, err := writer.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode == 404 {
		return nil, false
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return b, true
}

// TestBigCopyDoesNotStallMKCOL: a COPY of a 20,000-entry tree
// (bulk-populated with shoal admin populate) while another client runs
// MKCOLs one after the other: the copy runs in chunks, so MKCOLs go on
// while it runs and none waits for it as a whole (the latencies are
// logged; the 100 ms aim is measured, not asserted), and the copy
// appears whole.
func TestBigCopyDoesNotStallMKCOL(t *testing.T) {
	data := t.TempDir()
	// 200 directories of 99 files: 20,000 entries below /big.
	out, code := run(t, data, nil, shoalBin, "admin", "populate", "--catalog", "sqlite:"+filepath.Join(data, "catalog.db"),
		"--prefix", "/big", "--files", "19800", "--dirs", "200", "--size", "16")
	if code != 0 {
		t.Fatalf("shoal admin populate: %d\n%s", code, out)
	}
	n := startShoal(t, data)
	if r := do("MKCOL", n.URL+"/side", ""); r.status != 201 {
		t.Fatalf("MKCOL /side: %v", r)
	}
	done := make(chan reply, 1)
	start := time.Now()
	go func() { done <- do("COPY", n.URL+"/big", "", "Destination", n.URL+"/copy") }()
	var lat []time.Duration
	var copied reply
	for i := 0; ; i++ {
		select {
		case copied = <-done:
		default:
		}
		if copied.status != 0 || copied.body != "" {
			break
		}
		t0 := time.Now()
		if r := do("MKCOL", fmt.Sprintf("%s/side/m%05d", n.URL, i), ""); r.status != 201 {
			t.Fatalf("MKCOL during the COPY: %v", r)
		}
		lat = append(lat, time.Since(t0))
		if r := do("PROPFIND", n.URL+"/copy/d0199/", "", "Depth", "0"); r.status != 404 && r.status != 207 {
			t.Fatalf("PROPFIND /copy/d0199/ during the COPY: %v", r)
		} else if r.status == 207 && len(copied.body) == 0 && copied.status == 0 {
			// Visible before the COPY answered: it must be whole by now.
			if l := do("PROPFIND", n.URL+"/copy/d0000/", "", "Depth", "1"); strings.Count(l.body, "href>")/2 != 100 {
				t.Errorf("/copy visible while copying with a partial /copy/d0000/")
			}
		}
	}
	took := time.Since(start)
	if copied.status != 201 {
		t.Fatalf("COPY /big /copy: %v", copied)
	}
	if len(lat) == 0 {
		t.Fatal("the COPY ended before any MKCOL ran beside it")
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	t.Logf("COPY of 20,000 entries took %v; %d MKCOLs beside it: p50 %v, p90 %v, p99 %v, max %v",
		took.Round(time.Millisecond), len(lat), q(0.5), q(0.9), q(0.99), lat[len(lat)-1])
	// Behaviour, not a latency (the aim, 100 ms, is a benchmark's): MKCOLs
	// went on while the COPY ran, and none waited for it as a whole.
	if len(lat) < 3 {
		t.Errorf("only %d MKCOLs finished while the COPY ran (%v): the COPY holds the writer as a whole", len(lat), took)
	} else if max := lat[len(lat)-1]; max > took/2 {
		t.Errorf("a MKCOL waited %v while the COPY ran for %v: the COPY holds the writer as a whole", max, took)
	}
	for _, p := range []string{"/copy/d0000/f0000000", "/copy/d0199/f0019799"} {
		got, ok := fetch(t, n.URL+p)
		if !ok || len(got) != 16 {
			t.Errorf("GET %s after the COPY: present %v, %d bytes", p, ok, len(got))
		}
	}
}

// tempUploads lists the sizes of the uploads the shoal process pid is
// writing under the data server directory dir: named temp files in
// dir/tmp, and unnamed ones (O_TMPFILE, where the data server's
// filesystem has them) that only the process's open descriptors show
// (/proc/PID/fd/N names them dir/tmp/#INODE (deleted)).
func tempUploads(pid int, dir string) []int64 {
	tmp := filepath.Join(dir, "tmp") + string(filepath.Separator)
	var sizes []int64
	seen := map[string]bool{}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		p := fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())
		target, err := os.Readlink(p)
		if err != nil || !strings.HasPrefix(target, tmp) {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			sizes = append(sizes, fi.Size())
			seen[strings.TrimSuffix(target, " (deleted)")] = true
		}
	}
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && !seen[tmp+e.Name()] {
			sizes = append(sizes, fi.Size())
		}
	}
	return sizes
}

// TestSecondServerOnDataRefused: a second `shoal all` on a data directory
// in use exits at once, naming it, before it repairs anything there (it
// would take the first one's objects being written for a crash's
// leftovers); the first one goes on serving.
func TestSecondServerOnDataRefused(t *testing.T) {
	data := t.TempDir()
	n := startShoal(t, data)
	out, code := run(t, "", nil, "timeout", "30", shoalBin, "all", "--data", data,
		"--listen", "127.0.0.1:0", "--disk-listen", "127.0.0.1:0")
	if code == 0 || code == 124 || !strings.Contains(out, "in use by another data server") {
		t.Fatalf("second shoal all on %s: exit %d:\n%s", data, code, out)
	}
	if st := put(n.URL+"/after", []byte("still serving")); st != 201 {
		t.Fatalf("PUT to the first after the refusal: %d", st)
	}
	if got, ok := fetch(t, n.URL+"/after"); !ok || string(got) != "still serving" {
		t.Fatalf("GET from the first after the refusal: %q %v", got, ok)
	}
}
