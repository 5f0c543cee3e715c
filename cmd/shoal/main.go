// Command shoal is the one binary of the shoal storage system: the
// embedded single node (all), the metadata frontend (md), the data server
// (disk), the operator's tools (admin, config) and the benchmark (bench).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"shoal/cmd/shoal/config"
	"shoal/internal/logline"
)

// exitError carries a process exit code other than 1 (e.g. fsck's 2).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal starts a graceful shutdown; a second one kills at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	flushAccessLog()
	if err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code, err = ee.code, ee.err
		}
		if err != nil {
			printFatal(err)
		}
		os.Exit(code)
	}
}

// jsonLogs is set once the configuration asked for JSON logs.
var jsonLogs bool

// printFatal writes the error that ends the process: a log line when logs
// are JSON (a log shipper would not parse the plain line), else
// "shoal: …".
func printFatal(err error) {
	if jsonLogs {
		slog.Error("exiting", "err", err.Error())
		return
	}
	fmt.Fprintln(os.Stderr, "shoal:", err)
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "shoal",
		Short:         "storage for a shoal of small machines: HTTP/WebDAV over a SQL catalog",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("config", "", "YAML config file (also $SHOAL_CONFIG)")
	config.Flag(root.PersistentFlags(), "log-level", "log.level", "")
	config.Flag(root.PersistentFlags(), "log-format", "log.format", "")
	root.AddCommand(
		newAllCommand(),
		newMDCommand(),
		newDiskCommand(),
		newGWCommand(),
		newAdminCommand(),
		newConfigCommand(),
		newVersionCommand(),
	)
	addBenchCommand(root)
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command that only groups others
// (shoal admin, shoal admin job, shoal config…) fail on a word that is
// none of them: cobra printed the help and exited 0, so a script's
// `shoal admin stauts` passed for a success.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Run != nil || c.RunE != nil || c.Parent() == nil {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return fmt.Errorf("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
}

// setup loads the configuration of cmd and installs its logger.
func setup(cmd *cobra.Command) (config.Config, *slog.Logger, error) {
	c, err := config.Load(cmd.Flags())
	if err != nil {
		return config.Config{}, nil, err
	}
	log := slog.New(logHandler(c.Log, os.Stderr))
	slog.SetDefault(log)
	jsonLogs = c.Log.Format == "json"
	return c, log, nil
}

// logHandler is the handler of the configured log format and level,
// writing to w: logline's, which writes the lines slog's text and JSON
// handlers would, faster (md's audit lines, one a mutation, go through
// it). The level was validated when the config was loaded.
func logHandler(c config.LogConfig, w io.Writer) slog.Handler {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	return logline.NewHandler(w, c.Format == "json", level)
}
