package config

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// keyAnnotation marks a flag with the config key it sets.
const keyAnnotation = "shoal-config-key"

// leaf is one setting of Config: its key, current value and doc comment.
type leaf struct {
	key   string
	value reflect.Value
	doc   string
}

// section is a struct-valued field of Config, printed as a YAML mapping.
type section struct {
	key    string
	doc    string
	leaves []leaf
}

// walk lists the top-level leaves and the sections of c, in field order.
func walk(c *Config) (top []leaf, sections []section) {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key := f.Tag.Get("mapstructure")
		if f.Type.Kind() != reflect.Struct {
			top = append(top, leaf{key, v.Field(i), f.Tag.Get("doc")})
			continue
		}
		s := section{key: key, doc: f.Tag.Get("doc")}
		sv := v.Field(i)
		for j := 0; j < sv.NumField(); j++ {
			sf := sv.Type().Field(j)
			s.leaves = append(s.leaves, leaf{key + "." + sf.Tag.Get("mapstructure"), sv.Field(j), sf.Tag.Get("doc")})
		}
		sections = append(sections, s)
	}
	return top, sections
}

// allLeaves is every setting of c.
func allLeaves(c *Config) []leaf {
	top, sections := walk(c)
	out := top
	for _, s := range sections {
		out = append(out, s.leaves...)
	}
	return out
}

func findLeaf(c *Config, key string) (leaf, bool) {
	for _, l := range allLeaves(c) {
		if l.key == key {
			return l, true
		}
	}
	return leaf{}, false
}

// isStructList reports whether t is a list of mappings, which has no
// environment or flag form.
func isStructList(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct
}

// EnvName is the environment variable that sets key.
func EnvName(key string) string {
	return "SHOAL_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// Flag defines flag name on fs as the command-line form of config key,
// with the key's default and type. It panics on an unknown key: a
// programming error caught by every test that builds the commands.
func Flag(fs *pflag.FlagSet, name, key, usage string) {
	defaults := Defaults()
	l, ok := findLeaf(&defaults, key)
	if !ok {
		panic("no config key " + key)
	}
	if usage == "" {
		usage = l.doc
	}
	usage += " (" + key + ", $" + EnvName(key) + ")"
	switch v := l.value.Interface().(type) {
	case string:
		fs.String(name, v, usage)
	case []string:
		fs.StringSlice(name, v, usage)
	case bool:
		fs.Bool(name, v, usage)
	case int:
		fs.Int(name, v, usage)
	case time.Duration:
		fs.Duration(name, v, usage)
	case Size:
		fs.String(name, v.String(), usage)
	default:
		panic(fmt.Sprintf("config key %s: no flag type for %T", key, v))
	}
	if err := fs.SetAnnotation(name, keyAnnotation, []string{key}); err != nil {
		panic(err)
	}
}

// Load resolves the configuration of one command run from its parsed
// flags: defaults, then the file named by --config (or $SHOAL_CONFIG), then
// SHOAL_* variables, then the flags the user set (those defined with Flag).
// Unknown keys in the file are an error.
func Load(flags *pflag.FlagSet) (Config, error) {
	v := viper.New()
	v.SetEnvPrefix("SHOAL")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	defaults := Defaults()
	for _, l := range allLeaves(&defaults) {
		v.SetDefault(l.key, l.value.Interface())
		if isStructList(l.value.Type()) {
			continue // lists of mappings (auth.issuers, auth.rules): the file only
		}
		// AutomaticEnv alone is not seen by Unmarshal for keys without a
		// value elsewhere; an explicit binding is.
		if err := v.BindEnv(l.key); err != nil {
			return Config{}, err
		}
	}

	file := ""
	if f := flags.Lookup("config"); f != nil {
		file = f.Value.String()
	}
	if file == "" {
		file = v.GetString("config")
	}
	if file != "" {
		v.SetConfigFile(file)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return Config{}, fmt.Errorf("config file %s: %w", file, err)
		}
	}

	var bindErr error
	flags.VisitAll(func(f *pflag.Flag) {
		if keys := f.Annotations[keyAnnotation]; len(keys) == 1 && bindErr == nil {
			bindErr = v.BindPFlag(keys[0], f)
		}
	})
	if bindErr != nil {
		return Config{}, bindErr
	}
	return decodeConfig(v, file)
}

func decodeConfig(v *viper.Viper, file string) (Config, error) {
	var c Config
	hook := viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		sizeHook(),
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
	))
	if err := v.UnmarshalExact(&c, hook); err != nil {
		where := "configuration"
		if file != "" {
			where = "config file " + file
		}
		return Config{}, fmt.Errorf("%s: %w", where, err)
	}
	c.normalize()
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}
