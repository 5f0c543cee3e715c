package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// runCLI runs `bench args…` in process and returns what it printed.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	cmd := NewCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("bench %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

func readReport(t *testing.T, path string) Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestOutputsAgree: the table, the JSON and the CSV of one run carry the
// same figures, and those are what the server counted.
func TestOutputsAgree(t *testing.T) {
	s := startDAV(t)
	dir := t.TempDir()
	layout := []string{"--url", s.url, "--prefix", "/t", "--files", "40", "--dirs", "4", "-q"}
	runCLI(t, append([]string{"populate", "-c", "4"}, layout...)...)
	pathsFile := filepath.Join(dir, "paths")
	os.WriteFile(pathsFile, []byte("# stat these\n/t/d0001/f0000001\n/t/d0002/f0000002\n/err404/x\n/err500/y\n"), 0o644)
	jsonPath, csvPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	s.reset()
	table := runCLI(t, "stat", "--url", s.url, "--paths", pathsFile, "-c", "2,3", "-n", "400", "--warmup", "0",
		"--watts", "3.5", "--profile", "rpi4", "--json", jsonPath, "--csv", csvPath, "-q")
	m, st := s.counts()
	if m["HEAD"] != 800 || st[200] != 400 || st[404] != 200 || st[500] != 200 {
		t.Fatalf("server saw %v %v, want 800 HEAD: 400 200, 200 404, 200 500", m, st)
	}

	rep := readReport(t, jsonPath)
	if len(rep.Results) != 2 || rep.Machine.Cores == 0 {
		t.Fatalf("report: %+v", rep)
	}
	var lines []string
	for _, l := range strings.Split(table, "\n") {
		if strings.Contains(l, "stat-head") {
			lines = append(lines, l)
		}
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || len(lines) < 4 { // 2 result rows + 2 efficiency rows in the table
		t.Fatalf("csv rows %d, table lines %q", len(rows), lines)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, r := range rep.Results {
		if r.Count != 400 || r.OK != 200 || r.ByCode["404"] != 100 || r.ByCode["500"] != 100 || r.Concurrency != 2+i {
			t.Errorf("result %d: %+v", i, r)
		}
		// Only the 200 successes count as served.
		if want := float64(r.OK) / r.Seconds; r.ReqPerSec != want {
			t.Errorf("result %d: req/s %v, want OK/seconds %v", i, r.ReqPerSec, want)
		}
		// The table row has exactly the JSON's figures, as the table rounds them.
		want := tableRow(&r)
		got := strings.Fields(lines[i])
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("table row %q, JSON says %q", got, want)
		}
		if !strings.Contains(table, fmtRate(r.ReqPerSec)) || r.Efficiency == nil ||
			!strings.Contains(lines[2+i], strconv.FormatFloat(r.Efficiency.ReqPerSecPerWatt, 'f', 2, 64)) {
			t.Errorf("efficiency row %q for %+v", lines[2+i], r.Efficiency)
		}
		// The CSV row carries the JSON's figures at full precision.
		row := rows[1+i]
		num := func(name string) float64 {
			v, err := strconv.ParseFloat(row[col[name]], 64)
			if err != nil {
				t.Fatalf("csv %s: %v", name, err)
			}
			return v
		}
		for name, v := range map[string]float64{
			"count": float64(r.Count), "ok": float64(r.OK), "errors": float64(r.Errors),
			"errors_4xx": float64(r.ByClass["4xx"]), "errors_5xx": float64(r.ByClass["5xx"]),
			"req_per_sec": r.ReqPerSec, "mb_per_sec": r.MBPerSec, "seconds": r.Seconds,
			"lat_p50_ms": r.Latency.P50, "lat_p90_ms": r.Latency.P90, "lat_p99_ms": r.Latency.P99,
			"lat_p99.9_ms": r.Latency.P999, "lat_max_ms": r.Latency.Max,
			"req_per_sec_per_watt": r.Efficiency.ReqPerSecPerWatt, "tco_eur": r.Efficiency.TCOEUR,
			"requests_per_eur": r.Efficiency.RequestsPerEUR,
		} {
			if got := num(name); got != v {
				t.Errorf("csv %s = %v, json %v", name, got, v)
			}
		}
		if row[col["errors_by_code"]] != "404:100 500:100" || row[col["profile"]] != "rpi4" {
			t.Errorf("csv row %q", row)
		}
	}
}

// TestVersusCLI: --vs runs both targets in alternate rounds and reports
// each round's ratio and the overall one.
func TestVersusCLI(t *testing.T) {
	s := startDAV(t)
	ceiling := startCeiling(t)
	dir := t.TempDir()
	s.files["/a"] = []byte("hello")
	os.WriteFile(filepath.Join(dir, "p"), []byte("/a\n"), 0o644)
	jsonPath := filepath.Join(dir, "vs.json")
	s.reset()
	table := runCLI(t, "stat", "--url", s.url, "--vs", ceiling, "--paths", filepath.Join(dir, "p"),
		"-c", "2", "-n", "100", "--rounds", "3", "--warmup", "0", "--json", jsonPath, "-q")
	m, _ := s.counts()
	if m["HEAD"] != 300 {
		t.Errorf("server saw %v, want 300 HEAD (3 rounds × 100)", m)
	}
	rep := readReport(t, jsonPath)
	if len(rep.Results) != 2 || len(rep.Pairs) != 4 || rep.Results[0].Count != 300 || rep.Results[1].Count != 300 {
		t.Fatalf("results %+v pairs %+v", rep.Results, rep.Pairs)
	}
	all := rep.Pairs[3]
	if all.Round != 0 || all.A != s.url || all.B != ceiling || all.Ratio != rep.Results[0].ReqPerSec/rep.Results[1].ReqPerSec {
		t.Errorf("overall pair %+v", all)
	}
	for i, p := range rep.Pairs[:3] {
		if p.Round != i+1 || p.Ratio <= 0 || !strings.Contains(table, fmtRatio(p.Ratio)) {
			t.Errorf("pair %+v not in table", p)
		}
	}
}

// TestSweepPlot: a size sweep writes one result per size and a PNG; a
// concurrency sweep too.
func TestSweepPlot(t *testing.T) {
	ceiling := startCeiling(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		n    int
	}{
		{[]string{"sweep", "get", "put", "--sizes", "1k,64k,2m", "-c", "2"}, 6},
		{[]string{"put", "--size", "1k", "-c", "1,2,4"}, 3},
	} {
		pngPath, jsonPath := filepath.Join(dir, "p.png"), filepath.Join(dir, "p.json")
		args := append(tc.args, "--url", ceiling, "-n", "20", "--warmup", "0", "--plot", pngPath, "--json", jsonPath, "-q")
		runCLI(t, args...)
		if rep := readReport(t, jsonPath); len(rep.Results) != tc.n {
			t.Errorf("%v: %d results, want %d", tc.args, len(rep.Results), tc.n)
		}
		f, err := os.Open(pngPath)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() < 100 {
			t.Errorf("%v: plot %v", tc.args, err)
		}
		os.Remove(pngPath)
	}
}

// TestVersusSettles: with a settle step (--sync-rounds), it runs before
// the first round and after every round of either target, between them.
func TestVersusSettles(t *testing.T) {
	s := startDAV(t)
	a := newRunner(t, Options{URL: s.url, Concurrency: 2}, Spec{Name: "files", Op: OpCreate, Size: 10})
	b := newRunner(t, Options{URL: s.url, Concurrency: 2}, Spec{Name: "files", Op: OpCreate, Size: 10})
	s.reset()
	var seen []int // PUTs the server had seen at each settle
	Versus(context.Background(), a, b, 3, Limits{Count: 10}, func() {
		m, _ := s.counts()
		seen = append(seen, m["PUT"])
	})
	if want := []int{0, 10, 20, 30, 40, 50, 60}; !slices.Equal(seen, want) {
		t.Errorf("settled after %v PUTs, want %v", seen, want)
	}
	// The flag runs sync(2); here it only has to work.
	runCLI(t, "files", "--url", s.url, "--vs", s.url, "--sizes", "10", "-c", "1", "-n", "4", "--rounds", "2",
		"--warmup", "0", "--sync-rounds", "-q")
}

// TestMeasuredNothingFails: a run whose every request failed (here a HEAD
// of a path the server does not have) still prints its table, and the
// command fails saying so: it exited 0 with zero rates.
func TestMeasuredNothingFails(t *testing.T) {
	s := startDAV(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "p"), []byte("/missing\n"), 0o644)
	cmd := NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"stat", "--url", s.url, "--paths", filepath.Join(dir, "p"), "-c", "1", "-n", "20", "--warmup", "0", "-q"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "every one of 20 requests failed (404:20)") || !strings.Contains(out.String(), "stat-head") {
		t.Errorf("err = %v; output:\n%s", err, out.String())
	}
}
