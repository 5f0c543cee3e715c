package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"shoal"
)

// Report is everything one `shoal bench` run measured.
type Report struct {
	Started time.Time `json:"started"`
	Machine Machine   `json:"machine"`
	Command string    `json:"command,omitempty"`
	Results []Result  `json:"results"`
	Pairs   []Pair    `json:"pairs,omitempty"` // --vs: the two targets round by round, and overall
}

// Pair compares target A with target B on one workload in one round
// (Round 0: all rounds together). Ratio is A's req/s over B's.
type Pair struct {
	Workload string  `json:"workload"`
	Size     int64   `json:"size"`
	Round    int     `json:"round"`
	A        string  `json:"a"`
	B        string  `json:"b"`
	AReqPS   float64 `json:"a_req_per_sec"`
	BReqPS   float64 `json:"b_req_per_sec"`
	Ratio    float64 `json:"ratio"`
}

// Figures as the table prints them; tests compare the table with the
// JSON through these.
func fmtRate(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func fmtMB(v float64) string   { return strconv.FormatFloat(v, 'f', 2, 64) }
func fmtMS(v float64) string   { return strconv.FormatFloat(v, 'f', 3, 64) }
func fmtRatio(v float64) string {
	return strconv.FormatFloat(v, 'f', 3, 64)
}

var tableHeader = []string{"WORKLOAD", "TARGET", "SIZE", "CONC", "COUNT", "ERRORS", "REDIR", "REQ/S", "MB/S",
	"P50ms", "P90ms", "P99ms", "P99.9ms", "MAXms", "BY-CODE"}

// tableRow is one result as table cells; the last cell (errors by code)
// is "-" when there are none.
func tableRow(r *Result) []string {
	codes := codesString(r.ByCode)
	if codes == "" {
		codes = "-"
	}
	label := r.Workload
	if r.Label != "" {
		label += "/" + r.Label
	}
	return []string{label, r.Target, FormatSize(r.Size), strconv.Itoa(r.Concurrency),
		strconv.FormatUint(r.Count, 10), strconv.FormatUint(r.Errors, 10), strconv.FormatUint(r.Redirects, 10),
		fmtRate(r.ReqPerSec), fmtMB(r.MBPerSec),
		fmtMS(r.Latency.P50), fmtMS(r.Latency.P90), fmtMS(r.Latency.P99), fmtMS(r.Latency.P999), fmtMS(r.Latency.Max),
		strings.ReplaceAll(codes, " ", ",")}
}

// WriteTable prints the human table: results, efficiency and --vs pairs.
func (rep *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(tableHeader, "\t")+"\t")
	for i := range rep.Results {
		fmt.Fprintln(tw, strings.Join(tableRow(&rep.Results[i]), "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var eff bool
	for i := range rep.Results {
		eff = eff || rep.Results[i].Efficiency != nil
	}
	if eff {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "WORKLOAD\tTARGET\tREQ/S\tWATTS\tSOURCE\tREQ/S/W\tPROFILE\tTCO€\tYEARS\tREQ/S/€\tREQ/€\t")
		for _, r := range rep.Results {
			e := r.Efficiency
			if e == nil {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%s\t%.2f\t%s\t%.2f\t%g\t%.4f\t%.0f\t\n", r.Workload, r.Target,
				fmtRate(r.ReqPerSec), e.Watts, e.WattsSource, e.ReqPerSecPerWatt, e.Profile, e.TCOEUR, e.Years,
				e.ReqPerSecPerEUR, e.RequestsPerEUR)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(rep.Pairs) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "WORKLOAD\tSIZE\tROUND\tA\tB\tA REQ/S\tB REQ/S\tA/B\t")
		for _, p := range rep.Pairs {
			round := strconv.Itoa(p.Round)
			if p.Round == 0 {
				round = "all"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Workload, FormatSize(p.Size), round, p.A, p.B,
				fmtRate(p.AReqPS), fmtRate(p.BReqPS), fmtRatio(p.Ratio))
		}
		return tw.Flush()
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

var csvHeader = []string{"workload", "label", "target", "size", "concurrency", "rate", "seconds",
	"count", "ok", "errors", "errors_3xx", "errors_4xx", "errors_5xx", "errors_net", "errors_by_code",
	"redirects", "bytes", "req_per_sec", "mb_per_sec",
	"lat_mean_ms", "lat_p50_ms", "lat_p90_ms", "lat_p99_ms", "lat_p99.9_ms", "lat_max_ms",
	"watts", "watts_source", "req_per_sec_per_watt", "profile", "tco_eur", "req_per_sec_per_eur", "requests_per_eur"}

// WriteCSV writes one row per result, figures at full precision.
func (rep *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, r := range rep.Results {
		e := r.Efficiency
		if e == nil {
			e = &Efficiency{}
		}
		cw.Write([]string{r.Workload, r.Label, r.Target, strconv.FormatInt(r.Size, 10), strconv.Itoa(r.Concurrency),
			f(r.Rate), f(r.Seconds), u(r.Count), u(r.OK), u(r.Errors),
			u(r.ByClass["3xx"]), u(r.ByClass["4xx"]), u(r.ByClass["5xx"]), u(r.ByClass["net"]), codesString(r.ByCode),
			u(r.Redirects), u(r.Bytes), f(r.ReqPerSec), f(r.MBPerSec),
			f(r.Latency.Mean), f(r.Latency.P50), f(r.Latency.P90), f(r.Latency.P99), f(r.Latency.P999), f(r.Latency.Max),
			f(e.Watts), e.WattsSource, f(e.ReqPerSecPerWatt), e.Profile, f(e.TCOEUR), f(e.ReqPerSecPerEUR), f(e.RequestsPerEUR)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteFiles writes the JSON and CSV files named (empty names are skipped).
func (rep *Report) WriteFiles(jsonPath, csvPath string) error {
	for _, out := range []struct {
		path  string
		write func(io.Writer) error
	}{{jsonPath, rep.WriteJSON}, {csvPath, rep.WriteCSV}} {
		if out.path == "" {
			continue
		}
		f, err := os.Create(out.path)
		if err != nil {
			return shoal.E("bench.WriteFiles", out.path, shoal.KindInvalid, err)
		}
		err = out.write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return shoal.E("bench.WriteFiles", out.path, err)
		}
	}
	return nil
}
