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

const openapiUsage = `usage: carryon openapi
  Print the server's OpenAPI 3.1 document, as GET /openapi.json answers it, without a server
  (the TypeScript SDK's types are generated from it).

Example:
  carryon openapi > carryon-openapi.json`

// runOpenAPI prints the server's OpenAPI document.
func runOpenAPI(args []string, getenv env, stdout io.Writer) error {
	fs := newFlagSet("openapi", openapiUsage, stdout)
	if pos, err := fs.parse(getenv, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fs.misuse()
	}
	_, err := fmt.Fprintf(stdout, "%s\n", httpapi.OpenAPI())
	return err
}
