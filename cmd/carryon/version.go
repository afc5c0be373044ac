package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/carryon-hub/carryon"
)

func runVersion(stdout io.Writer) error {
	_, err := fmt.Fprintf(stdout, "carryon %s (%s)\n", carryon.Version, runtime.Version())
	return err
}
