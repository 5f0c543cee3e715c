package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLocalHosts: the private certificate names this host, loopback, the
// listen hosts and the https public URLs' hosts; an unspecified listen
// address adds this host's interface addresses.
func TestLocalHosts(t *testing.T) {
	hosts := localHosts([]string{"192.0.2.7:8443", "[::1]:8444"}, []string{"https://storage.example.org:8444/", "http://plain.example.org/", ""})
	for _, want := range []string{"localhost", "127.0.0.1", "::1", "192.0.2.7", "storage.example.org"} {
		if !slices.Contains(hosts, want) {
			t.Errorf("hosts %v lack %s", hosts, want)
		}
	}
	if slices.Contains(hosts, "plain.example.org") {
		t.Errorf("hosts %v name an http URL's host", hosts)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(hosts)))) != len(hosts) {
		t.Errorf("hosts %v repeat a name", hosts)
	}
	all := localHosts([]string{"0.0.0.0:8443"}, nil)
	if len(all) < len(localHosts(nil, nil)) || slices.Contains(all, "0.0.0.0") {
		t.Errorf("0.0.0.0: hosts %v", all)
	}
}

// TestAllTLSNeedsMDCertificate: shoal all refuses a data server or
// internal certificate without TLS asked for, naming the keys.
func TestAllTLSNeedsMDCertificate(t *testing.T) {
	_, err := execute(t, "all", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--config", writeConfig(t, "tls:\n  disk_cert_file: /c.pem\n  disk_key_file: /k.pem\n"))
	if err == nil || !strings.Contains(err.Error(), "tls.disk_cert_file") || !strings.Contains(err.Error(), "all.tls") {
		t.Fatalf("err = %v", err)
	}
}

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "shoal.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
