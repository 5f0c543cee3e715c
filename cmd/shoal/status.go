package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/md"
	"shoal/wire"
)

// healthTimeout bounds one /.shoal/healthz probe of `shoal admin status`.
const healthTimeout = 5 * time.Second

func newStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "print md's health, the data servers (state, liveness, health, space) and the pools as tables (exit 1 when something is unhealthy)",
		Args:  cobra.NoArgs,
		RunE:  runStatus,
	}
}

// serverStatus is one data server as `admin status` shows it.
type serverStatus struct {
	shoal.Server
	Live   bool   `json:"live"`   // heartbeated within md's md.server_ttl
	Health string `json:"health"` // "ok", or why its /.shoal/healthz failed
}

// status is the whole answer of `admin status`.
type status struct {
	MD       string         `json:"md"`
	MDHealth string         `json:"md_health"`
	Servers  []serverStatus `json:"servers"`
}

func runStatus(cmd *cobra.Command, _ []string) error {
	cl, err := adminClient(cmd)
	if err != nil {
		return err
	}
	st := status{MD: cl.Base, MDHealth: probeHealth(cl.HTTP, cl.Base)}
	servers, ttl, err := cl.Servers()
	if err != nil {
		return fmt.Errorf("servers: %w (md health: %s)", err, st.MDHealth)
	}
	if ttl <= 0 {
		ttl = md.DefaultServerTTL // an md that does not say
	}
	now := time.Now()
	for _, s := range servers {
		ss := serverStatus{Server: s, Live: s.Live(now, ttl), Health: "-"}
		if s.State != shoal.ServerRetired {
			ss.Health = probeHealth(cl.HTTP, s.URL)
		}
		st.Servers = append(st.Servers, ss)
	}
	sort.Slice(st.Servers, func(i, j int) bool { return st.Servers[i].ID < st.Servers[j].ID })
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		err = writeJSON(cmd.OutOrStdout(), st)
	} else {
		err = printStatus(cmd.OutOrStdout(), &st, now)
	}
	if err != nil {
		return err
	}
	if !st.healthy() {
		return &exitError{code: 1}
	}
	return nil
}

// healthy: md answers ok and every server not retired is live and ok.
func (st *status) healthy() bool {
	if st.MDHealth != "ok" {
		return false
	}
	for _, s := range st.Servers {
		if s.State != shoal.ServerRetired && (!s.Live || s.Health != "ok") {
			return false
		}
	}
	return true
}

// probeHealth GETs base's /.shoal/healthz with hc (whose TLS config
// verifies https servers against the cluster CA): "ok", or the reason it
// is not.
func probeHealth(hc *fasthttp.Client, base string) string {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(strings.TrimRight(base, "/") + wire.PathHealthz)
	if err := hc.DoTimeout(req, resp, healthTimeout); err != nil {
		return "unreachable: " + err.Error()
	}
	body := strings.Join(strings.Fields(string(resp.Body())), " ")
	if resp.StatusCode() == fasthttp.StatusOK {
		return body
	}
	return fmt.Sprintf("%d %s", resp.StatusCode(), body)
}

// poolStatus sums a pool's servers.
type poolStatus struct {
	name                string
	servers, live       int
	free, total         int64
	writable, unhealthy int
}

func printStatus(w io.Writer, st *status, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "MD\tHEALTH\n%s\t%s\n\n", st.MD, st.MDHealth)
	fmt.Fprintln(tw, "SERVER\tURL\tPOOL\tSTATE\tLIVE\tHEALTH\tFREE\tTOTAL\tUSED\tLAST SEEN")
	pools := map[string]*poolStatus{}
	for _, s := range st.Servers {
		used := "-"
		if s.Total > 0 {
			used = fmt.Sprintf("%.0f%%", 100*float64(s.Total-s.Free)/float64(s.Total))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s ago\n", s.ID, s.URL, s.Pool, s.State, yesNo(s.Live), s.Health,
			humanBytes(s.Free), humanBytes(s.Total), used, now.Sub(s.LastSeen).Round(time.Second))
		p := pools[s.Pool]
		if p == nil {
			p = &poolStatus{name: s.Pool}
			pools[s.Pool] = p
		}
		if s.State == shoal.ServerRetired {
			continue
		}
		p.servers++
		if s.Live {
			p.live++
			p.free += s.Free
			p.total += s.Total
			if s.State == shoal.ServerActive {
				p.writable++
			}
		}
		if !s.Live || s.Health != "ok" {
			p.unhealthy++
		}
	}
	names := make([]string, 0, len(pools))
	for n := range pools {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(tw, "\nPOOL\tSERVERS\tLIVE\tWRITABLE\tUNHEALTHY\tFREE (LIVE)\tTOTAL (LIVE)")
	for _, n := range names {
		p := pools[n]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", p.name, p.servers, p.live, p.writable, p.unhealthy, humanBytes(p.free), humanBytes(p.total))
	}
	verdict := "healthy"
	if !st.healthy() {
		verdict = "UNHEALTHY"
	}
	fmt.Fprintf(tw, "\nstatus\t%s\n", verdict)
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}
