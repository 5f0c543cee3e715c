package bench

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"shoal"
)

// DefaultSweepSizes are the object sizes of `bench sweep`.
const DefaultSweepSizes = "1k,16k,64k,128k,512k,1m,4m,16m,128m"

// cli holds the flags shared by every workload command.
type cli struct {
	url, vs, token, pathsFile        string
	basicAuth, caFile                string
	newConn, vsAnonymous, syncRounds bool
	tls                              *tls.Config // from caFile
	concurrency                      string
	duration, warmup, roundDur       time.Duration
	timeout                          time.Duration
	count                            uint64
	rate                             float64
	rounds                           int
	layout                           Layout
	jsonOut, csvOut, plotOut         string
	watts                            float64
	profile, profilesFile            string
	quiet                            bool
	stdout, stderr                   io.Writer
}

// NewCommand returns `bench` and its subcommands, ready to be added to
// shoal's root command.
func NewCommand() *cobra.Command {
	c := &cli{layout: DefaultLayout}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure any HTTP/WebDAV server: req/s, MB/s, latency, per watt and per euro",
		Long: `shoal bench measures an HTTP/WebDAV server — shoal, nginx, any other — with the
same load generator: stat, list, get, put, mix, files created per second, size
sweeps, and side-by-side runs against a second target (--vs), for example the
ceiling server (shoal bench ceiling), which is the HTTP limit of the machine.`,
		SilenceUsage: true,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&c.url, "url", "http://127.0.0.1:8080", "base URL of the target")
	pf.StringVar(&c.vs, "vs", "", "second target: run the workload against --url and --vs alternately and print the ratios")
	pf.IntVar(&c.rounds, "rounds", 5, "with --vs: rounds per target")
	pf.BoolVar(&c.vsAnonymous, "vs-anonymous", false, "with --vs: send --token or --user to --url only, none to --vs (e.g. TLS with a token against plain http without auth)")
	pf.DurationVar(&c.roundDur, "round-duration", 2*time.Second, "with --vs: length of one round")
	pf.BoolVar(&c.syncRounds, "sync-rounds", false, "with --vs: sync(2) this machine's disks before the first round and after every round, unmeasured, so that a target that does not fsync does not leave its writes to be written back during the other's rounds (for targets on this machine)")
	pf.StringVarP(&c.concurrency, "concurrency", "c", "16", "connections, or a list to sweep (1,4,16,64)")
	pf.DurationVarP(&c.duration, "duration", "d", 10*time.Second, "length of each measured phase")
	pf.Uint64VarP(&c.count, "count", "n", 0, "operations per phase instead of a duration")
	pf.DurationVar(&c.warmup, "warmup", time.Second, "unmeasured warm-up before each phase")
	pf.Float64Var(&c.rate, "rate", 0, "open loop: schedule this many requests/s in total; latency counts from the scheduled time")
	pf.StringVar(&c.token, "token", "", "bearer token (Authorization: Bearer …)")
	pf.StringVarP(&c.basicAuth, "user", "u", "", "USER:PASSWORD for HTTP Basic (Authorization: Basic …)")
	pf.StringVar(&c.caFile, "cacert", "", "PEM CA file that https targets are verified against (default: the system roots)")
	pf.BoolVar(&c.newConn, "new-conn", false, "a new connection for every request (measures connection setup: TCP and, over https, a full TLS handshake)")
	pf.DurationVar(&c.timeout, "timeout", time.Minute, "per-request timeout")
	pf.StringVar(&c.pathsFile, "paths", "", "file of paths (one per line) to stat, list or get, instead of the populate layout")
	pf.StringVar(&c.layout.Prefix, "prefix", DefaultLayout.Prefix, "populate layout: directory holding the tree")
	pf.IntVar(&c.layout.Files, "files", DefaultLayout.Files, "populate layout: number of files")
	pf.IntVar(&c.layout.Dirs, "dirs", DefaultLayout.Dirs, "populate layout: number of directories")
	pf.StringVar(&c.jsonOut, "json", "", "write the results as JSON to this file")
	pf.StringVar(&c.csvOut, "csv", "", "write the results as CSV to this file")
	pf.StringVar(&c.plotOut, "plot", "", "draw MB/s by size (sweeps) or req/s by concurrency to this PNG")
	pf.Float64Var(&c.watts, "watts", 0, "power draw of the target machine (default: RAPL when readable, else the profile's)")
	pf.StringVar(&c.profile, "profile", "", "hardware profile for per-watt and per-euro figures (rpi4, rpi-zero, cloud-vm, bare-metal, …)")
	pf.StringVar(&c.profilesFile, "profiles", "", "hardware profiles file (default: the embedded bench/profiles.yaml)")
	pf.BoolVarP(&c.quiet, "quiet", "q", false, "no progress line")

	cmd.AddCommand(c.statCmd(), c.listCmd(), c.getCmd(), c.putCmd(), c.mixCmd(), c.filesCmd(),
		c.sweepCmd(), c.populateCmd(), ceilingCmd(), machineCmd(), profilesCmd())
	return cmd
}

func (c *cli) statCmd() *cobra.Command {
	var method, body string
	cmd := &cobra.Command{
		Use:   "stat",
		Short: "stat existing files: HEAD or PROPFIND Depth 0 (paths from --paths or the populate layout)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m := strings.ToUpper(method)
			if m != "HEAD" && m != "PROPFIND" {
				return shoal.Errorf("bench stat", shoal.KindInvalid, "--method must be HEAD or PROPFIND, not %q", method)
			}
			paths, err := c.paths(c.layout.FilePaths)
			if err != nil {
				return err
			}
			pbody, err := PropfindBody(body)
			if err != nil {
				return err
			}
			return c.run(cmd, []Spec{{Name: "stat-" + strings.ToLower(m), Op: OpStat, Method: m, Paths: paths, Body: pbody}})
		},
	}
	cmd.Flags().StringVar(&method, "method", "HEAD", "HEAD or PROPFIND (Depth: 0)")
	cmd.Flags().StringVar(&body, "body", "", propfindBodyHelp)
	return cmd
}

func (c *cli) listCmd() *cobra.Command {
	var body string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list directories: PROPFIND Depth 1 (paths from --paths or the populate layout's directories)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			paths, err := c.paths(c.layout.DirPaths)
			if err != nil {
				return err
			}
			pbody, err := PropfindBody(body)
			if err != nil {
				return err
			}
			return c.run(cmd, []Spec{{Name: "list", Op: OpList, Paths: paths, Body: pbody}})
		},
	}
	cmd.Flags().StringVar(&body, "body", "", propfindBodyHelp)
	return cmd
}

func (c *cli) getCmd() *cobra.Command {
	var size string
	cmd := &cobra.Command{
		Use:   "get",
		Short: "GET objects of --size (written first), or the files of --paths",
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := ParseSize(size)
			if err != nil {
				return shoal.E("bench get", shoal.KindInvalid, err)
			}
			var paths []string
			if c.pathsFile != "" {
				if paths, err = c.paths(nil); err != nil {
					return err
				}
				if !cmd.Flags().Changed("size") {
					n = 0 // unknown: bodies are streamed, whatever their size
				}
			}
			return c.run(cmd, []Spec{{Name: "get", Op: OpGet, Size: n, Paths: paths}})
		},
	}
	cmd.Flags().StringVar(&size, "size", "4k", "object size (with --paths: the files' size if known; over 1m, or unknown, bodies are streamed)")
	return cmd
}

func (c *cli) putCmd() *cobra.Command {
	var size string
	cmd := &cobra.Command{
		Use:   "put",
		Short: "PUT objects of --size, overwriting a few per connection",
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := ParseSize(size)
			if err != nil {
				return shoal.E("bench put", shoal.KindInvalid, err)
			}
			return c.run(cmd, []Spec{{Name: "put", Op: OpPut, Size: n}})
		},
	}
	cmd.Flags().StringVar(&size, "size", "4k", "object size")
	return cmd
}

func (c *cli) mixCmd() *cobra.Command {
	var size string
	var ratio float64
	cmd := &cobra.Command{
		Use:   "mix",
		Short: "GET and PUT on the same objects, --get-ratio of them GETs",
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := ParseSize(size)
			if err != nil {
				return shoal.E("bench mix", shoal.KindInvalid, err)
			}
			if ratio < 0 || ratio > 1 {
				return shoal.Errorf("bench mix", shoal.KindInvalid, "--get-ratio must be within 0..1")
			}
			return c.run(cmd, []Spec{{Name: "mix", Op: OpMix, Size: n, GetRatio: ratio}})
		},
	}
	cmd.Flags().StringVar(&size, "size", "4k", "object size")
	cmd.Flags().Float64Var(&ratio, "get-ratio", 0.9, "fraction of operations that are GETs")
	return cmd
}

func (c *cli) filesCmd() *cobra.Command {
	var sizes string
	cmd := &cobra.Command{
		Use:   "files",
		Short: "files created per second (PUT of new files), by size",
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := ParseSizes(sizes)
			if err != nil {
				return shoal.E("bench files", shoal.KindInvalid, err)
			}
			var specs []Spec
			for _, n := range list {
				specs = append(specs, Spec{Name: "files", Op: OpCreate, Size: n})
			}
			return c.run(cmd, specs)
		},
	}
	cmd.Flags().StringVar(&sizes, "sizes", "0,1k,1m", "file sizes")
	return cmd
}

func (c *cli) sweepCmd() *cobra.Command {
	var sizes string
	cmd := &cobra.Command{
		Use:       "sweep [get|put]...",
		Short:     "get and/or put over a range of object sizes (MB/s by size)",
		ValidArgs: []string{"get", "put"},
		Args:      cobra.OnlyValidArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := ParseSizes(sizes)
			if err != nil {
				return shoal.E("bench sweep", shoal.KindInvalid, err)
			}
			if len(args) == 0 {
				args = []string{"get", "put"}
			}
			var specs []Spec
			for _, a := range args {
				for _, n := range list {
					op := OpGet
					if a == "put" {
						op = OpPut
					}
					specs = append(specs, Spec{Name: a, Op: op, Size: n})
				}
			}
			return c.run(cmd, specs)
		},
	}
	cmd.Flags().StringVar(&sizes, "sizes", DefaultSweepSizes, "object sizes")
	return cmd
}

func (c *cli) populateCmd() *cobra.Command {
	var size string
	cmd := &cobra.Command{
		Use:   "populate",
		Short: "create --files files of --size in --dirs directories under --prefix, for stat and list to read",
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := ParseSize(size)
			if err != nil {
				return shoal.E("bench populate", shoal.KindInvalid, err)
			}
			concs, err := parseInts(c.concurrency)
			if err != nil {
				return err
			}
			if err := c.loadTLS(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c.stdout, c.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			c.note("populate %s: %d files in %d directories under %s", c.url, c.layout.Files, c.layout.Dirs, c.layout.Prefix)
			res, err := Populate(ctx, c.options(c.url, concs[0]), c.layout, n)
			if err != nil {
				return err
			}
			return c.finish(&Report{Started: time.Now(), Machine: Describe(), Command: strings.Join(os.Args, " "),
				Results: []Result{res}})
		},
	}
	cmd.Flags().StringVar(&size, "size", "0", "file size")
	return cmd
}

func ceilingCmd() *cobra.Command {
	var listen string
	var body int
	var backend ceilingBackend
	cmd := &cobra.Command{
		Use:   "ceiling",
		Short: "serve constant answers (the HTTP limit of this box): 200 for GET/HEAD, 207 for PROPFIND, 201 for PUT",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return shoal.E("bench ceiling", listen, shoal.KindUnavailable, err)
			}
			srv, what, release, err := backend.server(body)
			if err != nil {
				ln.Close()
				return err
			}
			defer release()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() { <-ctx.Done(); srv.Shutdown() }()
			fmt.Fprintf(cmd.OutOrStdout(), "ceiling: serving http://%s (%s)\n", ln.Addr(), what)
			return srv.Serve(ln)
		},
	}
	backend.addFlags(cmd)
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8399", "address to listen on")
	cmd.Flags().IntVar(&body, "body-size", 128, "GET body size (HEAD answers the same Content-Length)")
	return cmd
}

func machineCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "machine",
		Short: "describe this machine (CPU, cores, RAM, kernel, Go) as markdown",
		Run:   func(cmd *cobra.Command, _ []string) { Describe().WriteMarkdown(cmd.OutOrStdout()) },
	}
}

func profilesCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "profiles",
		Short: "list the hardware profiles and their 3-year cost",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ps, err := LoadProfiles(file)
			if err != nil {
				return err
			}
			for _, p := range ps {
				fmt.Fprintf(cmd.OutOrStdout(), "%-12s %6.1f W  TCO %8.2f € over %g years  %s\n",
					p.Name, p.Watts, p.TCO(p.Watts), p.years(), p.Description)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "profiles", "", "profiles file (default: embedded)")
	return cmd
}

// paths reads --paths, or falls back to the layout's list.
func (c *cli) paths(layout func() []string) ([]string, error) {
	if c.pathsFile == "" {
		return layout(), nil
	}
	f, err := os.Open(c.pathsFile)
	if err != nil {
		return nil, shoal.E("bench --paths", c.pathsFile, shoal.KindNotFound, err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, shoal.E("bench --paths", c.pathsFile, shoal.KindInvalid, err)
	}
	if len(out) == 0 {
		return nil, shoal.Errorf("bench --paths", shoal.KindInvalid, "%s lists no paths", c.pathsFile)
	}
	return out, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, shoal.Errorf("bench", shoal.KindInvalid, "bad --concurrency %q", s)
		}
		out = append(out, v)
	}
	return out, nil
}

func (c *cli) options(url string, conc int) Options {
	o := Options{URL: url, Concurrency: conc, Token: c.token, BasicAuth: c.basicAuth, Timeout: c.timeout, TLS: c.tls, NewConn: c.newConn}
	if !c.quiet && isTerminal(c.stderr) {
		o.Progress = c.stderr
	}
	return o
}

// loadTLS reads --cacert into the client config of https targets.
func (c *cli) loadTLS() error {
	if c.caFile == "" {
		return nil
	}
	b, err := os.ReadFile(c.caFile)
	if err != nil {
		return shoal.E("bench --cacert", c.caFile, shoal.KindNotFound, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return shoal.Errorf("bench --cacert", shoal.KindInvalid, "%s holds no PEM certificate", c.caFile)
	}
	c.tls = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return nil
}

// note tells what runs next: on a terminal the progress line does that.
func (c *cli) note(format string, args ...any) {
	if !c.quiet && !isTerminal(c.stderr) {
		fmt.Fprintf(c.stderr, "bench: "+format+"\n", args...)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// run measures every spec at every concurrency and reports.
func (c *cli) run(cmd *cobra.Command, specs []Spec) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c.stdout, c.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	concs, err := parseInts(c.concurrency)
	if err != nil {
		return err
	}
	if err := c.loadTLS(); err != nil {
		return err
	}
	power, err := c.power()
	if err != nil {
		return err
	}
	rep := &Report{Started: time.Now(), Machine: Describe(), Command: strings.Join(os.Args, " ")}
	lim := Limits{Duration: c.duration, Count: c.count, Rate: c.rate}
	if c.count > 0 {
		lim.Duration = 0
	}
	for _, spec := range specs {
		for _, conc := range concs {
			if ctx.Err() != nil {
				break
			}
			if err := c.measure(ctx, rep, spec, conc, lim, power); err != nil {
				return err
			}
		}
	}
	return c.finish(rep)
}

func (c *cli) measure(ctx context.Context, rep *Report, spec Spec, conc int, lim Limits, power *powerSource) error {
	open := func(url string) (*Runner, error) {
		opts := c.options(url, conc)
		if url == c.vs && c.vsAnonymous {
			opts.Token, opts.BasicAuth = "", ""
		}
		r, err := NewRunner(opts, spec)
		if err != nil {
			return nil, err
		}
		if err := r.Setup(ctx); err != nil {
			r.Close()
			return nil, err
		}
		if c.warmup > 0 {
			r.Phase(ctx, Limits{Duration: c.warmup, Rate: lim.Rate})
		}
		return r, nil
	}
	a, err := open(c.url)
	if err != nil {
		return err
	}
	defer a.Close()
	if c.vs == "" {
		c.note("%s size %s against %s, %d connections", spec.Name, FormatSize(spec.Size), c.url, conc)
		power.start()
		res := a.Phase(ctx, lim)
		res.Efficiency = power.efficiency(res.ReqPerSec)
		rep.Results = append(rep.Results, res)
		return nil
	}
	b, err := open(c.vs)
	if err != nil {
		return err
	}
	defer b.Close()
	c.note("%s size %s: %s vs %s, %d connections, %d rounds", spec.Name, FormatSize(spec.Size), c.url, c.vs, conc, c.rounds)
	vsLim := lim
	if vsLim.Count == 0 {
		vsLim.Duration = c.roundDur
	}
	var settle func()
	if c.syncRounds {
		settle = settleDisks
	}
	ra, rb, pairs := Versus(ctx, a, b, c.rounds, vsLim, settle)
	ra.Efficiency = power.fixed(ra.ReqPerSec)
	rb.Efficiency = power.fixed(rb.ReqPerSec)
	rep.Results = append(rep.Results, ra, rb)
	rep.Pairs = append(rep.Pairs, pairs...)
	return nil
}

// finish prints the table and writes the files asked for.
func (c *cli) finish(rep *Report) error {
	if err := rep.WriteTable(c.stdout); err != nil {
		return err
	}
	if err := rep.WriteFiles(c.jsonOut, c.csvOut); err != nil {
		return err
	}
	if c.plotOut != "" {
		if err := Plot(rep.Results, c.plotOut); err != nil {
			return err
		}
	}
	return measuredNothing(rep.Results)
}

// measuredNothing is an error when some run had every request fail (a
// token refused, a target down): its rates are zeros, not a figure, and a
// script must not take it for one. It exited 0.
func measuredNothing(rs []Result) error {
	for _, r := range rs {
		if r.Count > 0 && r.OK == 0 {
			return shoal.Errorf("bench", shoal.KindUnavailable, "%s of %s at %d connections: every one of %d requests failed (%s): nothing measured",
				r.Workload, r.Target, r.Concurrency, r.Count, codesString(r.ByCode))
		}
	}
	return nil
}
