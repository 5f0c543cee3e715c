package tlsconf

import (
	"crypto/tls"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
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

// BenchmarkKeepAliveRequest is one HEAD on a kept-alive connection to a
// fasthttp server answering 200 with a few headers, over plain TCP and
// over TLS behind tls.NewListener as md serves it (client and server in
// this process): what TLS adds to each request once the handshake is
// done. cpu-µs/op counts both ends.
func BenchmarkKeepAliveRequest(b *testing.B) {
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
	for _, useTLS := range []bool{false, true} {
		name := "plain"
		if useTLS {
			name = "tls"
		}
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
				ctx.Response.Header.Set("ETag", `"0123456789abcdef"`)
				ctx.Response.Header.Set("Last-Modified", "Tue, 01 Dec 2026 13:00:00 GMT")
				ctx.Response.Header.SetContentLength(4096)
			}}
			serveLn := ln
			if useTLS {
				serveLn = tls.NewListener(ln, cert.TLSConfig())
			}
			go srv.Serve(serveLn)
			defer srv.Shutdown()
			hc := &fasthttp.HostClient{Addr: ln.Addr().String(), IsTLS: useTLS, TLSConfig: client, MaxConns: 1}
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			scheme := "http"
			if useTLS {
				scheme = "https"
			}
			req.SetRequestURI(scheme + "://127.0.0.1/bench/tree/d0001/f0000001")
			req.Header.SetMethod(fasthttp.MethodHead)
			if err := hc.Do(req, resp); err != nil { // the handshake, outside the loop
				b.Fatal(err)
			}
			cpu0 := processCPU()
			for b.Loop() {
				if err := hc.Do(req, resp); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
		})
	}
}
