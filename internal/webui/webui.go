// Package webui is the inspector: a web app, embedded in the binary, that shows and steers a
// user's sessions, runs, approvals, working memory and long-term memory in a browser. It is plain
// HTML, CSS and JavaScript modules (no build step, nothing loaded from another origin), served at
// Path by the API server (httpapi.Config.UI) under a strict Content-Security-Policy. The app
// calls the /v1 API with the key the user signs in with; the package knows nothing of the API.
package webui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// Path is where the server mounts Handler.
const Path = "/ui/"

// LocalKeyPath is the route (under Path) that hands the local user's key to a page on the same
// machine when Config.LocalKey is set; see localkey.go and docs/INSPECTOR.md for its threat model.
const LocalKeyPath = Path + "local-key"

// ContentSecurityPolicy is sent with every answer of the app: scripts, styles and requests only
// from the server itself, no inline script or style, no frames, no forms posted elsewhere.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed static
var static embed.FS

// Config holds what the inspector depends on.
type Config struct {
	// LocalKey, when set, returns the local user's key; it is offered to pages loaded from a
	// loopback address (see LocalKeyPath). Nil offers nothing.
	LocalKey func() (string, error)
}

// Handler serves the app under Path (the mux strips nothing: it expects paths that start with
// Path).
func Handler(cfg Config) http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	files := http.StripPrefix(Path, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		if r.URL.Path == LocalKeyPath {
			serveLocalKey(w, r, cfg.LocalKey)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// Every view is a fragment of index.html (#/sessions, #/s/ID): other paths are files.
		if strings.HasSuffix(r.URL.Path, "/index.html") {
			r.URL.Path = Path
		}
		files.ServeHTTP(w, r)
	})
}
