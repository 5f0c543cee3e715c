package bench

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// Machine describes the box a run was measured on.
type Machine struct {
	Host     string `json:"host"`
	CPU      string `json:"cpu"`
	Cores    int    `json:"cores"`
	MemoryMB int64  `json:"memory_mb"`
	Kernel   string `json:"kernel"`
	OS       string `json:"os"`
	Go       string `json:"go"`
}

// Describe reads the machine description from /proc where there is one.
func Describe() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	m.Host, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			k = strings.TrimSpace(k)
			if ok && (k == "model name" || k == "Model" || k == "Hardware") {
				m.CPU = strings.TrimSpace(v)
				if k == "model name" {
					break
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		for _, line := range strings.Split(string(b), "\n") {
			if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
				m.MemoryMB = kb / 1024
				break
			}
		}
	}
	return m
}

// WriteMarkdown prints the description as a markdown list.
func (m Machine) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "- host: %s\n- CPU: %s (%d cores)\n- RAM: %d MiB\n- kernel: %s (%s)\n- Go: %s\n",
		m.Host, m.CPU, m.Cores, m.MemoryMB, m.Kernel, m.OS, m.Go)
}
