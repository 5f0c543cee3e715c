package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"shoal"
	"shoal/internal/testsvc"
)

// TestJobsAcrossMD: two `shoal md` processes over one MariaDB catalog
// and one data server. A repair started through md A with --detach is
// listed and followed to its end through md B. A scrub (rate-bounded, so
// it lasts) started through md A is listed through md B; the md whose runner
// holds it is killed with SIGKILL mid-way, and the other md's runner
// takes it over once the lease (jobs.lease 2s) lapses and finishes it,
// while `shoal admin job follow` through the survivor keeps streaming
// progress and prints the whole report. Then a second scrub is cancelled
// with `shoal admin job cancel`: its follower ends at once, exit 1.
func TestJobsAcrossMD(t *testing.T) {
	curl := need(t, "curl")
	maria := testsvc.StartMariaDB(t)
	secret := writeSecret(t, "k1 0123456789abcdef0123456789abcdef\n")
	env := []string{"SHOAL_MD_DATA_MODE=proxy", "SHOAL_JOBS_LEASE=2s"}
	mds := []*proc{startMD(t, maria.DSN, "", secret, env), startMD(t, maria.DSN, "", secret, env)}
	startDisk(t, mds[0].URL, secret)
	dir := t.TempDir()
	const files, size = 8, 50_000 // at 0.05 MB/s: a second a file
	for i := range files {
		src, _ := randomFile(t, dir, fmt.Sprintf("f%d", i), size)
		var out string
		var code int
		for try := 0; try < 50; try++ { // until md has the data server's first heartbeat
			if out, code = run(t, dir, nil, curl, "-sS", "--fail-with-body", "-T", src, fmt.Sprintf("%s/f%d", mds[0].URL, i)); code == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if code != 0 {
			t.Fatalf("curl -T: exit %d: %s", code, out)
		}
	}
	admin := func(m *proc, args ...string) (string, int) {
		return run(t, dir, nil, shoalBin, append([]string{"admin", "--md", m.URL, "--secret-file", secret}, args...)...)
	}
	show := func(m *proc, id string) shoal.Job {
		t.Helper()
		out, code := admin(m, "--json", "job", "show", id)
		var j shoal.Job
		if err := json.Unmarshal([]byte(out), &j); code != 0 || err != nil {
			t.Fatalf("job show %s: exit %d, %v:\n%s", id, code, err, out)
		}
		return j
	}

	// A repair started through A is listed and followed through B.
	out, code := admin(mds[0], "repair", "--detach")
	rid := strings.TrimSpace(out)
	if _, err := strconv.ParseInt(rid, 10, 64); code != 0 || err != nil {
		t.Fatalf("repair --detach: exit %d, want a job id:\n%s", code, out)
	}
	if out, code := admin(mds[1], "jobs"); code != 0 || !strings.Contains(out, "\n"+rid+" ") || !strings.Contains(out, "repair") {
		t.Fatalf("jobs through md B: exit %d, no repair job %s:\n%s", code, rid, out)
	}
	if out, code := admin(mds[1], "job", "follow", rid); code != 0 || !strings.Contains(out, fmt.Sprintf("files %d  healthy %d  repaired 0  failed 0", files, files)) {
		t.Fatalf("job follow %s through md B: exit %d:\n%s", rid, code, out)
	}

	out, code = admin(mds[0], "scrub", "--rate", "0.05", "--detach")
	id := strings.TrimSpace(out)
	if _, err := strconv.ParseInt(id, 10, 64); code != 0 || err != nil {
		t.Fatalf("scrub --detach: exit %d, want a job id:\n%s", code, out)
	}
	if out, code := admin(mds[1], "jobs"); code != 0 || !strings.Contains(out, "\n"+id+" ") || !strings.Contains(out, "scrub") {
		t.Fatalf("jobs through md B: exit %d, no scrub job %s:\n%s", code, id, out)
	}
	// Which md runs it? Its runner's id carries the process id.
	var victim, survivor *proc
	deadline := time.Now().Add(10 * time.Second)
	for victim == nil {
		j := show(mds[1], id)
		for i, m := range mds {
			if strings.Contains(j.Owner, fmt.Sprintf("-%d-", m.cmd.Process.Pid)) {
				victim, survivor = m, mds[1-i]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not claimed by either md within 10 s: %+v", id, j)
		}
		time.Sleep(50 * time.Millisecond)
	}
	follow := startFollower(t, dir, survivor.URL, secret, id)
	for deadline := time.Now().Add(20 * time.Second); ; {
		var p struct{ Phase string }
		json.Unmarshal(show(survivor, id).Progress, &p)
		if p.Phase == "reading and verifying" && strings.Count(follow.out.String(), "scrub: reading and verifying") >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scrub never got to reading, or the follower never showed it:\n%s", follow.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(700 * time.Millisecond) // a file or so in
	before := show(survivor, id)
	victim.signal(syscall.SIGKILL)
	<-victim.exited
	killed := time.Now()
	for {
		if j := show(survivor, id); j.Owner != before.Owner {
			// Taken over within the lease (2s after the last heartbeat,
			// which was before the kill), plus the survivor's polling.
			if took := time.Since(killed); took > 2*time.Second+time.Second {
				t.Errorf("taken over %v after the kill, lease 2s", took)
			}
			break
		}
		if time.Since(killed) > 20*time.Second {
			t.Fatalf("nobody took job %s over within 20 s of the kill", id)
		}
		time.Sleep(50 * time.Millisecond)
	}

	select {
	case <-follow.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the follower did not end within 60 s of the kill:\n%s", follow.out)
	}
	after := show(survivor, id)
	if follow.code != 0 || !strings.Contains(follow.out.String(), fmt.Sprintf("files %d  replicas/shards %d  read 390.6 KiB  bad files 0", files, files)) {
		t.Errorf("follower: exit %d, want 0 and the whole report:\n%s", follow.code, follow.out)
	}
	if after.State != shoal.JobDone || after.Runs != 2 || after.Owner == before.Owner {
		t.Errorf("job after the kill: %s, %d runs, owner %s (was %s); want done, taken over", after.State, after.Runs, after.Owner, before.Owner)
	}
	lines := strings.Count(follow.out.String(), "scrub: ")
	if lines < 3 {
		t.Errorf("the follower showed %d progress lines:\n%s", lines, follow.out)
	}

	// Cancel: the follower of a long scrub ends at once, saying so.
	out, _ = admin(survivor, "scrub", "--rate", "0.01", "--detach")
	id2 := strings.TrimSpace(out)
	follow2 := startFollower(t, dir, survivor.URL, secret, id2)
	time.Sleep(500 * time.Millisecond)
	if out, code := admin(survivor, "job", "cancel", id2); code != 0 || !strings.Contains(out, "cancelled") {
		t.Fatalf("job cancel: exit %d:\n%s", code, out)
	}
	select {
	case <-follow2.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the follower of a cancelled job still runs 10 s later:\n%s", follow2.out)
	}
	if follow2.code != 1 || !strings.Contains(follow2.out.String(), "was cancelled") {
		t.Errorf("follower of a cancelled job: exit %d:\n%s", follow2.code, follow2.out)
	}
	if j := show(survivor, id2); j.State != shoal.JobCancelled {
		t.Errorf("cancelled job: %+v", j)
	}
}

// follower is a `shoal admin job follow ID` running in the background.
type follower struct {
	out  *lockedBuffer
	code int
	done chan struct{}
}

func startFollower(t *testing.T, dir, mdURL, secret, id string) *follower {
	t.Helper()
	f := &follower{out: &lockedBuffer{}, done: make(chan struct{})}
	cmd := exec.Command(shoalBin, "admin", "--md", mdURL, "--secret-file", secret, "job", "follow", id)
	cmd.Dir, cmd.Env = dir, os.Environ()
	cmd.Stdout, cmd.Stderr = f.out, f.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		f.code = cmd.ProcessState.ExitCode()
		close(f.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-f.done
	})
	return f
}
