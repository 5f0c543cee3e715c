package main

import (
	"github.com/spf13/cobra"
)

// addBenchCommand adds `shoal bench` from bench/ once it exists.
// TODO(bench): root.AddCommand(bench.NewCommand()) when bench/ lands.
func addBenchCommand(root *cobra.Command) {}
