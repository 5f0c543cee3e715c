package tlsconf

import (
	"crypto/tls"
	"net"
	"syscall"
	"testing"
	"time"
)

// processCPU is this process's user and system CPU time so far, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkHandshake is one full TLS handshake (no resumption) of a client
// verifying the private CA's server certificate, both ends in this process
// what a new connection costs md or a data server,
// over loopback TCP, with Go's default key exchange (TLS 1.3,
// X25519MLKEM768 first) and with X25519 alone. cpu-µs/op is the CPU both
// ends spent per handshake, steadier than ns/op on a shared box.
func BenchmarkHandshake(b *testing.B) {
	pc, err := EnsurePrivateCA(b.TempDir(), []string{"127.0.0.1"})
	if err != nil {
		b.Fatal(err)
	}
	cert, err := LoadServerCert(pc.CertFile, pc.KeyFile)
	if err != nil {
		b.Fatal(err)
	}
	client, err := ClientConfig(pc.CAFile)
	if err != nil {
		b.Fatal(err)
	}
	client.ServerName = "127.0.0.1"
	for _, tc := range []struct {
		name   string
		curves []tls.CurveID
	}{{"default", nil}, {"X25519", []tls.CurveID{tls.X25519}}} {
		b.Run(tc.name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			done := make(chan error)
			go func() {
				tln := tls.NewListener(ln, cert.TLSConfig())
				for {
					c, err := tln.Accept()
					if err != nil {
						return
					}
					done <- c.(*tls.Conn).Handshake()
					c.Close()
				}
			}()
			cliCfg := client.Clone()
			cliCfg.CurvePreferences = tc.curves
			cpu0 := processCPU()
			for b.Loop() {
				c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ln.Addr().String(), cliCfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
			b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
		})
	}
}
