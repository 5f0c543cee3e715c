package gw

import (
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"shoal/storetest"
)

// BenchmarkEncode measures what Create spends per stripe besides I/O:
// Reed-Solomon parity and the crc32c of every chunk, for 1 MiB stripes.
// Run with -cpu 1 for the figure per core (the coder is single-threaded).
func BenchmarkEncode(b *testing.B) {
	for _, l := range []struct{ k, m int }{{4, 2}, {8, 3}, {2, 1}} {
		b.Run(fmt.Sprintf("ec:%d+%d", l.k, l.m), func(b *testing.B) {
			enc, err := newEncoder(l.k, l.m)
			if err != nil {
				b.Fatal(err)
			}
			chunk := (DefaultStripeSize/l.k + chunkAlign - 1) / chunkAlign * chunkAlign
			shards := make([][]byte, l.k+l.m)
			for i := range shards {
				shards[i] = make([]byte, chunk+crcSize)
				if i < l.k {
					copy(shards[i], storetest.Data(uint64(i), chunk))
				}
			}
			views := make([][]byte, len(shards))
			for i := range shards {
				views[i] = shards[i][:chunk]
			}
			b.SetBytes(int64(l.k * chunk))
			for b.Loop() {
				if err := enc.Encode(views); err != nil {
					b.Fatal(err)
				}
				for i := range shards {
					binary.LittleEndian.PutUint32(shards[i][chunk:], crc32c(views[i]))
				}
			}
		})
	}
}

// BenchmarkGet128MiB: GET of a 128 MiB file over loopback HTTP, ec:4+2
// through a gw.Server over six diskservers vs replica:1 straight from one
// diskserver (sendfile).
func BenchmarkGet128MiB(b *testing.B) {
	const size = 128 << 20
	c := startCluster(b, 6)
	_, gwURL := c.gateway(b, 0)
	id := "b128"
	put := func(url string) {
		req, _ := http.NewRequest("PUT", url, newGen(size))
		req.ContentLength = size
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 {
			b.Fatalf("PUT: %d", resp.StatusCode)
		}
	}
	get := func(b *testing.B, url string) {
		b.SetBytes(size)
		for b.Loop() {
			resp, err := http.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n != size || resp.StatusCode != 200 {
				b.Fatalf("GET: %d, %d bytes, %v", resp.StatusCode, n, err)
			}
		}
	}
	exp := time.Now().Add(time.Hour)
	put(SignedURL(c.keys, gwURL, "PUT", id, "", ec42, c.ids(), exp))
	put(c.keys.URL(c.disks[0].URL(), "PUT", "c128", "", exp))
	b.Run("ec:4+2", func(b *testing.B) { get(b, SignedURL(c.keys, gwURL, "GET", id, "", ec42, c.ids(), exp)) })
	b.Run("replica:1", func(b *testing.B) { get(b, c.keys.URL(c.disks[0].URL(), "GET", "c128", "", exp)) })
}
