package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// listen opens a TCP listener on addr, with SO_REUSEPORT when reusePort so
// that several processes on one host can share the port (the kernel
// spreads connections over them).
func listen(addr string, reusePort bool) (net.Listener, error) {
	lc := net.ListenConfig{}
	if reusePort {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			})
			if err != nil {
				return err
			}
			return serr
		}
	}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// listenSpec is an address to listen on and whether to share its port.
type listenSpec struct {
	addr      string
	reusePort bool
}

// listenAll opens every listener or none: after a failure it closes those
// it opened.
func listenAll(specs ...listenSpec) ([]net.Listener, error) {
	lns := make([]net.Listener, 0, len(specs))
	for _, s := range specs {
		ln, err := listen(s.addr, s.reusePort)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// nextPort is addr with its port plus one, or port 0 when addr's port is 0
// (any free port).
func nextPort(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("%q: bad port", addr)
	}
	if p == 65535 {
		return "", fmt.Errorf("%q: the data server would listen on the next port, and there is none: set disk.listen (--disk-listen)", addr)
	}
	if p != 0 {
		p++
	}
	return net.JoinHostPort(host, strconv.Itoa(p)), nil
}

// reachableURL is an http URL for the bound address a. An unspecified host
// (0.0.0.0, ::) becomes the loopback address: good for this host only; set
// a public URL for others.
func reachableURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String()
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port))
}
