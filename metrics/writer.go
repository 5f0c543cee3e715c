package metrics

import (
	"math"
	"strconv"
	"strings"
)

// Label is one name="value" pair of a sample.
type Label struct{ Name, Value string }

// L builds labels from alternating names and values: L("tier", "l1").
func L(nv ...string) []Label {
	ls := make([]Label, 0, len(nv)/2)
	for i := 0; i+1 < len(nv); i += 2 {
		ls = append(ls, Label{nv[i], nv[i+1]})
	}
	return ls
}

// Writer gathers the samples of one scrape, grouped by metric name.
type Writer struct {
	families map[string]*family
}

type family struct {
	help, typ string
	samples   []byte
}

// family returns the family name, declaring it on first use. A later
// declaration with another type keeps the first.
func (w *Writer) family(name, help, typ string) *family {
	f := w.families[name]
	if f == nil {
		f = &family{help: help, typ: typ}
		w.families[name] = f
	}
	return f
}

// Counter writes one counter sample.
func (w *Writer) Counter(name, help string, v float64, labels ...Label) {
	f := w.family(name, help, TypeCounter)
	f.samples = appendSample(f.samples, name, labels, "", "", v)
}

// Gauge writes one gauge sample.
func (w *Writer) Gauge(name, help string, v float64, labels ...Label) {
	f := w.family(name, help, TypeGauge)
	f.samples = appendSample(f.samples, name, labels, "", "", v)
}

// Histogram writes one histogram: upper bounds with their cumulative
// counts (the +Inf bucket is added: count), the sum and the count.
func (w *Writer) Histogram(name, help string, bounds []float64, cumulative []uint64, sum float64, count uint64, labels ...Label) {
	f := w.family(name, help, TypeHistogram)
	for i, b := range bounds {
		f.samples = appendSample(f.samples, name+"_bucket", labels, "le", formatFloat(b), float64(cumulative[i]))
	}
	f.samples = appendSample(f.samples, name+"_bucket", labels, "le", "+Inf", float64(count))
	f.samples = appendSample(f.samples, name+"_sum", labels, "", "", sum)
	f.samples = appendSample(f.samples, name+"_count", labels, "", "", float64(count))
}

func appendSample(b []byte, name string, labels []Label, extraName, extraValue string, v float64) []byte {
	b = append(b, name...)
	if len(labels) > 0 || extraName != "" {
		b = append(b, '{')
		for i, l := range labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendLabel(b, l.Name, l.Value)
		}
		if extraName != "" {
			if len(labels) > 0 {
				b = append(b, ',')
			}
			b = appendLabel(b, extraName, extraValue)
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = append(b, formatFloat(v)...)
	return append(b, '\n')
}

func appendLabel(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, '=', '"')
	b = append(b, labelEscaper.Replace(value)...)
	return append(b, '"')
}

// The text format escapes \, " and newline in label values, \ and newline
// in HELP.
var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeHelp(s string) string { return helpEscaper.Replace(s) }

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
