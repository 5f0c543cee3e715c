//go:build !linux

package diskserver

import (
	"errors"
	"os"
)

var errNoUnnamed = errors.New("unnamed temp files are Linux only")

func openUnnamed(string) (*os.File, error) { return nil, errNoUnnamed }

func linkUnnamed(*os.File, string) error { return errNoUnnamed }
