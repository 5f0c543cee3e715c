package auth

import (
	"net"
	"strings"
	"testing"

	"shoal/auth/rules"
)

func TestCheckListen(t *testing.T) {
	bare := New(Config{})
	for _, addr := range []string{"127.0.0.1:8080", "[::1]:8080", "localhost:80"} {
		if err := bare.CheckListen(addr); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.0.2.1:443", "[::]:80"} {
		if err := bare.CheckListen(addr); err == nil || !strings.Contains(err.Error(), "auth.rules") {
			t.Errorf("%s: %v", addr, err)
		}
	}
	anon, err := rules.Compile([]rules.Rule{{Path: "/", Who: "anonymous", Rights: []string{"read"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := New(Config{Rules: anon}).CheckListen("0.0.0.0:8080"); err != nil {
		t.Errorf("explicit anonymous rule: %v", err)
	}
	f := newFixture(t, nil)
	if err := f.auth.CheckListen("0.0.0.0:8080"); err != nil {
		t.Errorf("issuer and users configured: %v", err)
	}
	if !Secure(false, net.ParseIP("127.0.0.1")) || Secure(false, net.ParseIP("192.0.2.1")) || !Secure(true, nil) {
		t.Error("Secure")
	}
}
