package gw

import (
	"io"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkGet128MiBParallel: 4 concurrent GETs of a 128 MiB file (the
// layouts sweep's -c 4), ec:4+2 through a gw.Server over six diskservers
// vs replica:1 straight from one diskserver. Servers and clients share the
// process, so on a small machine the CPU is the limit: cpu-s/GiB (user +
// system time of the whole process per GiB served) is the figure that
// says whether the gw path got cheaper.
func BenchmarkGet128MiBParallel(b *testing.B) {
	const size = 128 << 20
	const conc = 4
	c := startCluster(b, 6)
	_, gwURL := c.gateway(b, 0)
	exp := time.Now().Add(time.Hour)
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
	put(SignedURL(c.keys, gwURL, "PUT", "b128", "", ec42, c.ids(), exp))
	put(c.keys.URL(c.disks[0].URL(), "PUT", "c128", "", exp))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	get := func(b *testing.B, url string) {
		b.SetBytes(size)
		// Each op is one GET; RunParallel runs GOMAXPROCS·p goroutines.
		b.SetParallelism((conc + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		cpu0 := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, err := client.Get(url)
				if err != nil {
					b.Error(err)
					return
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || n != size || resp.StatusCode != 200 {
					b.Errorf("GET: %d, %d bytes, %v", resp.StatusCode, n, err)
					return
				}
			}
		})
		gib := float64(b.N) * size / (1 << 30)
		b.ReportMetric((cpuTime()-cpu0).Seconds()/gib, "cpu-s/GiB")
	}
	b.Run("ec:4+2", func(b *testing.B) { get(b, SignedURL(c.keys, gwURL, "GET", "b128", "", ec42, c.ids(), exp)) })
	b.Run("replica:1", func(b *testing.B) { get(b, c.keys.URL(c.disks[0].URL(), "GET", "c128", "", exp)) })
}

// cpuTime is the user + system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
