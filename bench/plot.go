package bench

import (
	"fmt"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"shoal"
)

// Plot draws the results to a PNG (or SVG/PDF, by extension): req/s
// against concurrency when the results span several concurrencies (a
// concurrency sweep), else MB/s against object size (a size sweep, log
// scale). One line per workload and target.
func Plot(results []Result, path string) error {
	const op = "bench.Plot"
	concs := map[int]bool{}
	for _, r := range results {
		concs[r.Concurrency] = true
	}
	byConc := len(concs) > 1
	p := plot.New()
	if byConc {
		p.Title.Text = "requests/s by concurrency"
		p.X.Label.Text = "connections"
		p.Y.Label.Text = "requests/s"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = sizeTicks{conc: true}
	} else {
		p.Title.Text = "throughput by object size"
		p.X.Label.Text = "object size (bytes)"
		p.Y.Label.Text = "MB/s"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = sizeTicks{}
	}
	lines := map[string]plotter.XYs{}
	var names []string
	for _, r := range results {
		name := r.Workload + " " + r.Target
		x, y := float64(r.Size), r.MBPerSec
		if byConc {
			x, y = float64(r.Concurrency), r.ReqPerSec
		}
		if x <= 0 {
			continue // no place on a log axis
		}
		if _, ok := lines[name]; !ok {
			names = append(names, name)
		}
		lines[name] = append(lines[name], plotter.XY{X: x, Y: y})
	}
	if len(names) == 0 {
		return shoal.Errorf(op, shoal.KindInvalid, "nothing to plot: no result with a size or concurrency above 0")
	}
	var args []any
	for _, n := range names {
		xy := lines[n]
		sort.Slice(xy, func(i, j int) bool { return xy[i].X < xy[j].X })
		args = append(args, n, xy)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return shoal.E(op, path, err)
	}
	p.Legend.Top = true
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return shoal.E(op, path, shoal.KindInvalid, err)
	}
	return nil
}

// sizeTicks marks powers of two (sizes as 1k, 1m) or connection counts.
type sizeTicks struct{ conc bool }

func (t sizeTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	step := 4.0
	if t.conc {
		step = 2
	}
	for v := 1.0; v <= max*1.0001; v *= step {
		if v < min*0.9999 {
			continue
		}
		label := FormatSize(int64(v))
		if t.conc {
			label = strconv.Itoa(int(v))
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	if len(ticks) == 0 {
		ticks = append(ticks, plot.Tick{Value: min, Label: fmt.Sprint(min)})
	}
	return ticks
}
