package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// RAPLRoot is where Linux exposes RAPL energy counters.
const RAPLRoot = "/sys/class/powercap"

// raplZone is one top-level RAPL package domain (intel-rapl:N; AMD CPUs
// expose theirs under the same name).
type raplZone struct {
	energy string // energy_uj file
	max    uint64 // max_energy_range_uj: the counter wraps to 0 past it
}

// EnergyMeter samples the RAPL package counters of a machine. Sub-zones
// (intel-rapl:N:M, e.g. core and dram) are inside their package's figure
// and are not added again.
type EnergyMeter struct {
	zones []raplZone
	start []uint64
	t0    time.Time
}

// NewEnergyMeter finds readable package counters under root; it returns
// nil when there are none (not Linux, no RAPL, or not permitted: recent
// kernels make energy_uj readable by root only).
func NewEnergyMeter(root string) *EnergyMeter {
	dirs, _ := filepath.Glob(filepath.Join(root, "intel-rapl:*"))
	m := &EnergyMeter{}
	for _, d := range dirs {
		if strings.Count(filepath.Base(d), ":") != 1 {
			continue
		}
		z := raplZone{energy: filepath.Join(d, "energy_uj")}
		if _, err := readUint(z.energy); err != nil {
			continue
		}
		z.max, _ = readUint(filepath.Join(d, "max_energy_range_uj"))
		m.zones = append(m.zones, z)
	}
	if len(m.zones) == 0 {
		return nil
	}
	return m
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// Start samples the counters.
func (m *EnergyMeter) Start() {
	m.start = m.sample()
	m.t0 = time.Now()
}

func (m *EnergyMeter) sample() []uint64 {
	out := make([]uint64, len(m.zones))
	for i, z := range m.zones {
		out[i], _ = readUint(z.energy)
	}
	return out
}

// Stop samples again and returns the joules used since Start and the mean
// watts. A counter lower than at Start wrapped once past max_energy_range_uj.
func (m *EnergyMeter) Stop() (joules, watts float64) {
	end := m.sample()
	el := time.Since(m.t0).Seconds()
	joules = energyDelta(m.start, end, m.zones)
	if el > 0 {
		watts = joules / el
	}
	return joules, watts
}

func energyDelta(start, end []uint64, zones []raplZone) float64 {
	var uj uint64
	for i := range zones {
		if end[i] >= start[i] {
			uj += end[i] - start[i]
		} else {
			uj += zones[i].max - start[i] + end[i]
		}
	}
	return float64(uj) / 1e6
}
