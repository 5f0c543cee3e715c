package bench

import (
	_ "embed"
	"os"

	"go.yaml.in/yaml/v3"

	"shoal"
)

// Profile is one kind of machine for the per-watt and per-euro figures.
type Profile struct {
	Name        string  `yaml:"name" json:"name"`
	Description string  `yaml:"description,omitempty" json:"description,omitempty"`
	Watts       float64 `yaml:"watts,omitempty" json:"watts,omitempty"`             // power draw under load
	PriceEUR    float64 `yaml:"price_eur,omitempty" json:"price_eur,omitempty"`     // purchase price
	Years       float64 `yaml:"years,omitempty" json:"years,omitempty"`             // lifetime (default 3)
	EURPerKWh   float64 `yaml:"eur_per_kwh,omitempty" json:"eur_per_kwh,omitempty"` // electricity price
	HourlyEUR   float64 `yaml:"hourly_eur,omitempty" json:"hourly_eur,omitempty"`   // rented machines: replaces price and power
}

const hoursPerYear = 24 * 365

// TCO is the total cost of ownership in euros over the profile's years: the
// hourly price times the hours when rented, else the purchase price plus
// the energy at the given watts.
func (p Profile) TCO(watts float64) float64 {
	years := p.years()
	if p.HourlyEUR > 0 {
		return p.HourlyEUR * hoursPerYear * years
	}
	return p.PriceEUR + watts*hoursPerYear*years/1000*p.EURPerKWh
}

func (p Profile) years() float64 {
	if p.Years <= 0 {
		return 3
	}
	return p.Years
}

//go:embed profiles.yaml
var defaultProfiles []byte

// LoadProfiles reads a profiles file, or the embedded default when path is "".
func LoadProfiles(path string) ([]Profile, error) {
	const op = "bench.LoadProfiles"
	data := defaultProfiles
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, shoal.E(op, path, shoal.KindNotFound, err)
		}
	}
	var f struct {
		Profiles []Profile `yaml:"profiles"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, shoal.E(op, path, shoal.KindInvalid, err)
	}
	return f.Profiles, nil
}

// FindProfile returns the profile called name.
func FindProfile(profiles []Profile, name string) (Profile, error) {
	for _, p := range profiles {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, shoal.Errorf("bench.FindProfile", shoal.KindNotFound, "no hardware profile %q", name)
}

// Efficiency is a result per watt and per euro.
type Efficiency struct {
	Watts            float64 `json:"watts,omitempty"`
	WattsSource      string  `json:"watts_source,omitempty"` // "flag", "rapl" or "profile"
	ReqPerSecPerWatt float64 `json:"req_per_sec_per_watt,omitempty"`
	Profile          string  `json:"profile,omitempty"`
	Years            float64 `json:"years,omitempty"`
	TCOEUR           float64 `json:"tco_eur,omitempty"`
	ReqPerSecPerEUR  float64 `json:"req_per_sec_per_eur,omitempty"`
	RequestsPerEUR   float64 `json:"requests_per_eur,omitempty"` // over the profile's years at this rate
}

// Efficiency computes the per-watt and per-euro figures of a rate of
// reqPerSec at watts (0: unknown) on profile p (nil: none).
func ComputeEfficiency(reqPerSec, watts float64, source string, p *Profile) *Efficiency {
	if watts <= 0 && p == nil {
		return nil
	}
	e := &Efficiency{Watts: watts, WattsSource: source}
	if watts > 0 {
		e.ReqPerSecPerWatt = reqPerSec / watts
	}
	if p != nil {
		e.Profile = p.Name
		e.Years = p.years()
		e.TCOEUR = p.TCO(watts)
		if e.TCOEUR > 0 {
			e.ReqPerSecPerEUR = reqPerSec / e.TCOEUR
			e.RequestsPerEUR = reqPerSec * e.Years * hoursPerYear * 3600 / e.TCOEUR
		}
	}
	return e
}
