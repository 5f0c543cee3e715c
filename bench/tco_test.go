package bench

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func approx(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestDPMRaspberryPi: the DPM evaluation's Raspberry Pi row, 25.8 req/s
// at 3.5 W, is 7.37 req/s per watt.
func TestDPMRaspberryPi(t *testing.T) {
	e := ComputeEfficiency(25.8, 3.5, "flag", nil)
	if !approx(e.ReqPerSecPerWatt, 7.37, 0.005) {
		t.Fatalf("%.4f req/s/W, want 7.37", e.ReqPerSecPerWatt)
	}
}

// TestTCO checks hand-computed cases.
func TestTCO(t *testing.T) {
	// 75 € + 3.5 W × 26280 h / 1000 × 0.25 €/kWh = 75 + 22.995 = 97.995 €
	pi := Profile{Name: "pi", Watts: 3.5, PriceEUR: 75, Years: 3, EURPerKWh: 0.25}
	if got := pi.TCO(3.5); !approx(got, 97.995, 1e-9) {
		t.Errorf("pi TCO %v, want 97.995", got)
	}
	e := ComputeEfficiency(25.8, 3.5, "profile", &pi)
	// 25.8 / 97.995 = 0.263279 req/s/€; × 94,608,000 s = 24,908,274.9 requests per euro
	if !approx(e.ReqPerSecPerEUR, 25.8/97.995, 1e-12) || !approx(e.ReqPerSecPerEUR, 0.263279, 1e-6) {
		t.Errorf("req/s/€ %v", e.ReqPerSecPerEUR)
	}
	if !approx(e.RequestsPerEUR, 25.8*94608000/97.995, 1e-3) || !approx(e.RequestsPerEUR, 24908274.9, 0.1) {
		t.Errorf("requests/€ %v", e.RequestsPerEUR)
	}
	// A rented VM: 0.04 €/h × 26280 h = 1051.2 €, whatever the watts.
	vm := Profile{Name: "vm", HourlyEUR: 0.04}
	if got := vm.TCO(100); !approx(got, 1051.2, 1e-9) {
		t.Errorf("vm TCO %v, want 1051.2", got)
	}
	// A server for 5 years: 3000 € + 200 W × 43800 h / 1000 × 0.30 = 3000 + 2628 = 5628 €.
	srv := Profile{PriceEUR: 3000, Years: 5, EURPerKWh: 0.30}
	e = ComputeEfficiency(50000, 200, "rapl", &srv)
	if !approx(e.TCOEUR, 5628, 1e-9) || !approx(e.ReqPerSecPerWatt, 250, 1e-12) || !approx(e.Years, 5, 0) {
		t.Errorf("server %+v", e)
	}
	if ComputeEfficiency(10, 0, "", nil) != nil {
		t.Errorf("no watts and no profile should give no efficiency")
	}
}

// TestProfiles: the embedded file parses and has the four kinds of machine;
// a file given replaces it.
func TestProfiles(t *testing.T) {
	ps, err := LoadProfiles("")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rpi4", "rpi-zero", "cloud-vm", "bare-metal"} {
		p, err := FindProfile(ps, name)
		if err != nil {
			t.Fatal(err)
		}
		if p.TCO(p.Watts) <= 0 {
			t.Errorf("%s: TCO %v", name, p.TCO(p.Watts))
		}
	}
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte("profiles:\n  - name: mine\n    watts: 10\n    price_eur: 100\n    years: 1\n    eur_per_kwh: 1\n"), 0o644)
	ps, err = LoadProfiles(path)
	if err != nil {
		t.Fatal(err)
	}
	// 100 € + 10 W × 8760 h / 1000 × 1 €/kWh = 187.6 €
	if p, err := FindProfile(ps, "mine"); err != nil || !approx(p.TCO(p.Watts), 187.6, 1e-9) {
		t.Errorf("custom profile %+v %v", p, err)
	}
	if _, err := FindProfile(ps, "rpi4"); err == nil {
		t.Errorf("the file given should replace the embedded profiles")
	}
}

// TestRAPL reads counters laid out as Linux exposes them, in a temporary
// directory, with one package wrapping around.
func TestRAPL(t *testing.T) {
	root := t.TempDir()
	write := func(zone, file, v string) {
		os.MkdirAll(filepath.Join(root, zone), 0o755)
		if err := os.WriteFile(filepath.Join(root, zone, file), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("intel-rapl:0", "energy_uj", "1000000")
	write("intel-rapl:0", "max_energy_range_uj", "262143328850")
	write("intel-rapl:1", "energy_uj", "262143000000")
	write("intel-rapl:1", "max_energy_range_uj", "262143328850")
	write("intel-rapl:0:0", "energy_uj", "5") // a sub-zone: inside package 0, not added
	m := NewEnergyMeter(root)
	if m == nil || len(m.zones) != 2 {
		t.Fatalf("meter %+v", m)
	}
	m.Start()
	write("intel-rapl:0", "energy_uj", "6000000") // +5 J
	write("intel-rapl:1", "energy_uj", "671150")  // wrapped: 328850 + 671150 µJ = 1 J
	write("intel-rapl:0:0", "energy_uj", "999999999")
	j, w := m.Stop()
	if !approx(j, 6, 1e-9) || w <= 0 {
		t.Errorf("%v J, %v W; want 6 J", j, w)
	}
	if NewEnergyMeter(filepath.Join(root, "none")) != nil {
		t.Errorf("meter without counters")
	}
}
