package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/httpapi"
)

func runVersion(stdout io.Writer) error {
	_, err := fmt.Fprintf(stdout, "carryon %s (%s)\n", carryon.Version, runtime.Version())
	return err
}

// runOpenAPI prints the server's OpenAPI document, as GET /openapi.json answers it, without a
// server.
func runOpenAPI(stdout io.Writer) error {
	_, err := fmt.Fprintf(stdout, "%s\n", httpapi.OpenAPI())
	return err
}
