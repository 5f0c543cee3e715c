package config

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// WriteSample writes c as a commented YAML config file: every key, its
// value and what it means. With Defaults() it is shoal.example.yaml.
func WriteSample(w io.Writer, c *Config) error {
	var b strings.Builder
	b.WriteString("# shoal configuration: every key with its default (`shoal config defaults`).\n")
	b.WriteString("# Load with --config FILE. Precedence, highest first: command-line flag,\n")
	b.WriteString("# SHOAL_* environment variable (key upper-cased, \".\" → \"_\", e.g.\n")
	b.WriteString("# SHOAL_MD_DATA_MODE=proxy sets md.data_mode), this file, the default.\n")
	b.WriteString("# Unknown keys are an error. Sizes take KiB/MiB/GiB; durations 30s, 5m, 1h.\n")
	top, sections := walk(c)
	for _, l := range top {
		fmt.Fprintf(&b, "\n# %s\n%s: %s\n", l.doc, l.key, yamlValue(l.value.Interface()))
	}
	for _, s := range sections {
		fmt.Fprintf(&b, "\n# %s\n%s:\n", s.doc, s.key)
		for _, l := range s.leaves {
			name := l.key[len(s.key)+1:]
			fmt.Fprintf(&b, "  # %s\n  %s: %s\n", l.doc, name, yamlValue(l.value.Interface()))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// yamlValue writes one value in YAML flow style.
func yamlValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case time.Duration:
		return strconv.Quote(shortDuration(v))
	case Size:
		return strconv.Quote(v.String())
	}
	if rv := reflect.ValueOf(v); isStructList(rv.Type()) {
		return structList(rv)
	}
	return fmt.Sprint(v)
}

// structList writes a list of structs (auth.issuers, auth.rules) as a
// flow sequence of mappings keyed by their mapstructure tags.
func structList(v reflect.Value) string {
	items := make([]string, v.Len())
	for i := range items {
		e := v.Index(i)
		var fields []string
		for j := 0; j < e.NumField(); j++ {
			fields = append(fields, e.Type().Field(j).Tag.Get("mapstructure")+": "+yamlValue(e.Field(j).Interface()))
		}
		items[i] = "{" + strings.Join(fields, ", ") + "}"
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// shortDuration drops the zero tails of time.Duration.String: 5m, not 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
