package metrics_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"shoal"
	"shoal/metrics"
)

func TestSpaceCollectorReportsFailure(t *testing.T) {
	reg := metrics.NewRegistry()
	ok := true
	reg.Register(metrics.SpaceCollector("disk-1", func(context.Context) (shoal.Space, error) {
		if !ok {
			return shoal.Space{}, errors.New("statfs failed")
		}
		return shoal.Space{Free: 100, Total: 400}, nil
	}))
	text := scrape(t, reg)
	for _, want := range []string{`shoal_disk_free_bytes{server="disk-1"} 100`, `shoal_disk_total_bytes{server="disk-1"} 400`, `shoal_disk_space_ok{server="disk-1"} 1`} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	ok = false
	text = scrape(t, reg)
	if !strings.Contains(text, `shoal_disk_space_ok{server="disk-1"} 0`) || strings.Contains(text, "shoal_disk_free_bytes") {
		t.Errorf("a failed space read must say so and report no figures:\n%s", text)
	}
}
