package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"shoal"
	"shoal/cmd/shoal/config"
	"shoal/sign"
	"shoal/tpc"
)

// One box, several disks: `shoal all --data DIR1,DIR2,DIR3` runs one data
// server per directory (one per disk: each fails alone) and, with more
// than one, an in-process gw, so that a pool can be ec:K+M or replica:N
// across the disks of a single node and survive losing one. DIR1 also
// holds the catalog, the secret and the private CA.

// extraDisk is a data server of shoal all beyond the first.
type extraDisk struct {
	dir  string
	ln   net.Listener
	url  string
	node *observedDisk
}

// diskDirs prepares DIR/disk for every all.data directory after the
// first (the first is runAll's own).
func diskDirs(c *config.Config) ([]string, error) {
	var out []string
	for _, d := range c.All.Data[1:] {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		disk := filepath.Join(abs, "disk")
		if err := os.MkdirAll(disk, 0o700); err != nil {
			return nil, fmt.Errorf("all.data: %w", err)
		}
		for _, p := range []string{abs, disk} {
			if err := tightenMode(p, 0o700); err != nil {
				return nil, err
			}
		}
		out = append(out, disk)
	}
	if len(out) > 0 && (len(c.Disk.Data) > 0 || c.Disk.ID != "") {
		return nil, fmt.Errorf("disk.data and disk.id name one data server: with several all.data directories each gets its own")
	}
	return out, nil
}

// nthAddr is the address of the i-th extra data server: the first data
// server's host, port + i when that port is fixed, a free one otherwise.
func nthAddr(first string, i int) (string, error) {
	host, port, err := net.SplitHostPort(first)
	if err != nil {
		return "", err
	}
	p, err := strconv.Atoi(port)
	if err != nil || p == 0 {
		return net.JoinHostPort(host, "0"), nil
	}
	return net.JoinHostPort(host, strconv.Itoa(p+i)), nil
}

// nthURL is disk.public_url with its port moved by i (the extra data
// servers listen on consecutive ports), or "" when it is not set.
func nthURL(public string, i int) string {
	if public == "" {
		return ""
	}
	u, err := url.Parse(public)
	if err != nil || u.Port() == "" {
		return ""
	}
	p, _ := strconv.Atoi(u.Port())
	u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(p+i))
	return u.String()
}

// startExtraDisks makes the data servers of dirs, each reporting to
// mdURL, each with its own metrics registry (on its own port).
func startExtraDisks(c *config.Config, keys *sign.Keys, dirs []string, tlsOf *allTLS, mdURL string, t *tpc.Client, log *slog.Logger) ([]*extraDisk, error) {
	var out []*extraDisk
	fail := func(err error) ([]*extraDisk, error) {
		for _, d := range out {
			d.ln.Close()
		}
		return nil, err
	}
	for i, dir := range dirs {
		addr, err := nthAddr(c.Disk.Listen, i+1)
		if err != nil {
			return fail(fmt.Errorf("disk.listen: %w", err))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fail(fmt.Errorf("data server for %s: %w", dir, err))
		}
		public := nthURL(c.Disk.PublicURL, i+1)
		if public == "" {
			public = tlsOf.disk.url(ln.Addr())
		}
		disk, err := newDisk(c, keys, []string{dir}, mdURL, public, tlsOf.toMD, t, log.With("disk", dir))
		if err != nil {
			ln.Close()
			return fail(err)
		}
		out = append(out, &extraDisk{dir: dir, ln: tlsOf.disk.listener(ln), url: public,
			node: observeDisk(newRegistry(), disk, c.Net.Guard())})
	}
	return out, nil
}

// setDefaultLayout applies all.layout to the default pool.
func setDefaultLayout(ctx context.Context, c *config.Config, cat shoal.Catalog) error {
	if c.All.Layout == "" {
		return nil
	}
	l, err := shoal.ParseLayout(c.All.Layout)
	if err != nil {
		return fmt.Errorf("all.layout: %w", err)
	}
	if n := len(c.All.Data); l.Width() > n {
		return fmt.Errorf("all.layout: %s needs %d data servers, --data gives %d", l, l.Width(), n)
	}
	return cat.PutPool(ctx, shoal.Pool{Name: shoal.DefaultPool, Layout: l})
}

// gwAddr is where shoal all's gw listens: gw.listen, else md's host on a
// free port.
func gwAddr(c *config.Config) string {
	if c.GW.Listen != "" {
		return c.GW.Listen
	}
	host, _, err := net.SplitHostPort(c.MD.Listen)
	if err != nil {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, "0")
}
