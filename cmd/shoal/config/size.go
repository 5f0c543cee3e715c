package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
)

// Size is a byte count written in config as a number or with a binary unit:
// 4096, "4KiB", "1MiB", "2GiB" ("K", "KB" and "k" mean KiB too).
type Size int64

const (
	KiB Size = 1 << 10
	MiB Size = 1 << 20
	GiB Size = 1 << 30
	TiB Size = 1 << 40
)

var sizeUnits = []struct {
	names []string
	mult  Size
}{
	{[]string{"tib", "tb", "t"}, TiB},
	{[]string{"gib", "gb", "g"}, GiB},
	{[]string{"mib", "mb", "m"}, MiB},
	{[]string{"kib", "kb", "k"}, KiB},
	{[]string{"b", ""}, 1},
}

// ParseSize parses a Size.
func ParseSize(s string) (Size, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, u := range sizeUnits {
		for _, name := range u.names {
			num, ok := strings.CutSuffix(t, name)
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n < 0 || Size(n) > (1<<62)/u.mult {
				return 0, fmt.Errorf("size %q: want a number of bytes, optionally with KiB, MiB, GiB or TiB", s)
			}
			return Size(n) * u.mult, nil
		}
	}
	return 0, fmt.Errorf("size %q: want a number of bytes, optionally with KiB, MiB, GiB or TiB", s)
}

// String writes s with the largest unit that divides it exactly.
func (s Size) String() string {
	for _, u := range sizeUnits[:4] {
		if s != 0 && s%u.mult == 0 {
			return strconv.FormatInt(int64(s/u.mult), 10) + strings.ToUpper(u.names[0][:1]) + "iB"
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// sizeHook lets mapstructure decode strings and numbers into Size.
func sizeHook() mapstructure.DecodeHookFuncType {
	return func(from, to reflect.Type, data any) (any, error) {
		if to != reflect.TypeOf(Size(0)) {
			return data, nil
		}
		switch v := data.(type) {
		case string:
			return ParseSize(v)
		case int:
			return Size(v), nil
		case int64:
			return Size(v), nil
		case uint64:
			return Size(v), nil
		case float64:
			if v != float64(int64(v)) {
				return nil, fmt.Errorf("size %v: not a whole number of bytes", v)
			}
			return Size(v), nil
		}
		return data, nil
	}
}
