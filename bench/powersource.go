package bench

// powerSource decides where the watts of the per-watt figures come from:
// --watts, else RAPL measured over each phase when readable, else the
// profile's figure.
type powerSource struct {
	watts   float64
	source  string
	profile *Profile
	meter   *EnergyMeter
}

func (c *cli) power() (*powerSource, error) {
	ps := &powerSource{}
	if c.profile != "" {
		all, err := LoadProfiles(c.profilesFile)
		if err != nil {
			return nil, err
		}
		p, err := FindProfile(all, c.profile)
		if err != nil {
			return nil, err
		}
		ps.profile = &p
	}
	switch {
	case c.watts > 0:
		ps.watts, ps.source = c.watts, "flag"
	case ps.profile != nil && ps.profile.HourlyEUR > 0:
		// A rented machine: power is in the price and RAPL would measure the host.
	default:
		if ps.meter = NewEnergyMeter(RAPLRoot); ps.meter == nil && ps.profile != nil && ps.profile.Watts > 0 {
			ps.watts, ps.source = ps.profile.Watts, "profile"
		}
	}
	return ps, nil
}

func (ps *powerSource) start() {
	if ps.meter != nil {
		ps.meter.Start()
	}
}

// efficiency ends a measured phase.
func (ps *powerSource) efficiency(reqPerSec float64) *Efficiency {
	if ps.meter != nil {
		_, w := ps.meter.Stop()
		return ComputeEfficiency(reqPerSec, w, "rapl", ps.profile)
	}
	return ps.fixed(reqPerSec)
}

// fixed uses the flag or profile watts only (--vs rounds interleave two
// targets, so one RAPL reading cannot be split between them).
func (ps *powerSource) fixed(reqPerSec float64) *Efficiency {
	return ComputeEfficiency(reqPerSec, ps.watts, ps.source, ps.profile)
}
