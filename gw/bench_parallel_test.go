package gw

import (
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"shoal/wire"
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
	_, gwURL := gateway(b, c, 0)
	exp := time.Now().Add(time.Hour)
	benchPut(b, wire.GatewayURL(c.Keys, gwURL, "PUT", "b128", "", ec42, c.IDs(), exp), size)
	benchPut(b, c.Keys.URL(c.Disks[0].URL(), "PUT", "c128", "", exp), size)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	get := func(b *testing.B, url string) {
		b.SetBytes(size)
		// Each op is one GET; RunParallel runs GOMAXPROCS·p goroutines.
		b.SetParallelism((conc + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		cpu0 := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := benchGet(client, url, size); err != nil {
					b.Error(err)
					return
				}
			}
		})
		gib := float64(b.N) * size / (1 << 30)
		b.ReportMetric((cpuTime()-cpu0).Seconds()/gib, "cpu-s/GiB")
	}
	b.Run("ec:4+2", func(b *testing.B) { get(b, wire.GatewayURL(c.Keys, gwURL, "GET", "b128", "", ec42, c.IDs(), exp)) })
	b.Run("replica:1", func(b *testing.B) { get(b, c.Keys.URL(c.Disks[0].URL(), "GET", "c128", "", exp)) })
}

// cpuTime is the user + system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
