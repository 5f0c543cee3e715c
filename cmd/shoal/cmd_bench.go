package main

import (
	"github.com/spf13/cobra"

	"shoal/bench"
)

// addBenchCommand adds `shoal bench`, the evaluator's load generator,
// which has its own flags (see bench/).
func addBenchCommand(root *cobra.Command) {
	root.AddCommand(bench.NewCommand())
}
