package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeKeysExist: every configuration key and SHOAL_* variable the
// READMEs name exists (the finding: the README named md.max_xml_body,
// which the loader refused).
func TestReadmeKeysExist(t *testing.T) {
	c := Defaults()
	top, sections := walk(&c)
	keys, env := map[string]bool{}, map[string]bool{}
	isSection := map[string]bool{}
	for _, l := range allLeaves(&c) {
		keys[l.key] = true
		env[EnvName(l.key)] = true
	}
	for _, s := range sections {
		isSection[s.key] = true
	}
	_ = top
	docs := []string{"../../../README.md"}
	more, _ := filepath.Glob("../../../deploy/*/README.md")
	docs = append(docs, more...)
	keyRE := regexp.MustCompile("`([a-z][a-z0-9_]*)\\.([a-z][a-z0-9_]*)(?:[:= ][^`]*)?`")
	envRE := regexp.MustCompile(`\bSHOAL_[A-Z0-9_]+\b`)
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range keyRE.FindAllStringSubmatch(string(b), -1) {
			if !isSection[m[1]] || fileExt[m[2]] {
				continue // a file name (md.yaml), a Go identifier, a metric…
			}
			checked++
			if key := m[1] + "." + m[2]; !keys[key] {
				t.Errorf("%s names the config key %s, which does not exist", filepath.Base(filepath.Dir(doc))+"/"+filepath.Base(doc), key)
			}
		}
		for _, v := range envRE.FindAllString(string(b), -1) {
			if strings.HasSuffix(v, "_") || v == "SHOAL_CONFIG" || v == "SHOAL_PID" {
				continue // "SHOAL_*", the file itself, a recipe's shell variable
			}
			checked++
			if !env[v] {
				t.Errorf("%s names %s, which sets no config key", doc, v)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d key mentions found: the README is not being read", checked)
	}
}

var fileExt = map[string]bool{"yaml": true, "yml": true, "json": true, "go": true, "md": true, "conf": true, "service": true, "db": true}
