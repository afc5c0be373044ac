package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
)

const versionUsage = `usage: carryon version
  Print carryon's version and the Go version it was built with.

Example:
  carryon version`

func runVersion(args []string, getenv env, stdout io.Writer) error {
	fs := newFlagSet("version", versionUsage, stdout)
	if pos, err := fs.parse(getenv, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fs.misuse()
	}
	_, err := fmt.Fprintf(stdout, "carryon %s (%s)\n", carryon.Version, runtime.Version())
	return err
}

// runOpenAPI prints the server's OpenAPI document, as GET /openapi.json answers it, without a
// server.
func runOpenAPI(stdout io.Writer) error {
	_, err := fmt.Fprintf(stdout, "%s\n", httpapi.OpenAPI())
	return err
}
