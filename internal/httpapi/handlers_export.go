package httpapi

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/bundle"
)

// Media types of session bundles (docs/EXPORT.md): JSON Lines under either name.
const (
	mediaNDJSON = "application/x-ndjson"
	mediaJSONL  = "application/jsonl"
)

// handleSessionExport streams the session's bundle, which the service reads in one read
// transaction before the first byte is sent.
func (s *server) handleSessionExport() http.HandlerFunc {
	if s.export == nil {
		return s.notImplemented("this server exports no sessions")
	}
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := s.export(r.Context(), r.PathValue("id"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", mediaNDJSON)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Header().Set("Content-Disposition", `attachment; filename="`+r.PathValue("id")+`.jsonl"`)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(b)
		}
	}
}

// handleSessionStorage answers what the session takes, by kind.
func (s *server) handleSessionStorage() http.HandlerFunc {
	if s.storage == nil {
		return s.notImplemented("this server reports no session storage")
	}
	return readRoute(s, func(r *http.Request, _ *query) (*carryon.SessionStorage, error) {
		return s.storage(r.Context(), r.PathValue("id"))
	})
}

// handleSessionImport makes a session of the caller from a bundle or from OpenAI conversation
// items: the format by the query's format, else by the Content-Type (JSON Lines: a bundle;
// application/json: OpenAI items).
func (s *server) handleSessionImport() http.HandlerFunc {
	if s.importer == nil {
		return s.notImplemented("this server imports no sessions")
	}
	return writeRoute[carryon.ImportInput, *carryon.ImportResult]{
		read:     readImport,
		controls: retryWrite(func(in *carryon.ImportInput) *carryon.RetryOptions { return &in.RetryOptions }),
		call: func(ctx context.Context, _ *http.Request, in carryon.ImportInput) (*carryon.ImportResult, error) {
			return s.importer(ctx, in)
		},
		status:   http.StatusCreated,
		location: func(_ *http.Request, r *carryon.ImportResult) string { return sessionPath(r.Session.ID) },
	}.handler(s)
}

// readImport reads an import's body (up to bundle.MaxBytes, whatever the server's body limit)
// and its query.
func readImport(s *server, r *http.Request) (carryon.ImportInput, error) {
	q := r.URL.Query()
	in := carryon.ImportInput{Format: q.Get("format"), Parent: q.Get("parent"), Order: q.Get("order")}
	switch q.Get("keep_ids") {
	case "", "false":
	case "true":
		in.KeepIDs = true
	default:
		return in, carryon.Errorf(carryon.EINVALID, "keep_ids must be true or false, not %q", q.Get("keep_ids"))
	}
	ct := r.Header.Get("Content-Type")
	media, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil {
		return in, carryon.Errorf(carryon.EUNSUPPORTED, "Content-Type must be %s or %s (a bundle) or %s (OpenAI conversation items)", mediaNDJSON, mediaJSONL, mediaJSON)
	}
	switch {
	case media != mediaNDJSON && media != mediaJSONL && media != mediaJSON:
		return in, carryon.Errorf(carryon.EUNSUPPORTED, "Content-Type %q is not supported; send %s or %s (a bundle) or %s (OpenAI conversation items)", media, mediaNDJSON, mediaJSONL, mediaJSON)
	case in.Format == "" && media == mediaJSON:
		in.Format = carryon.ImportOpenAI
	case in.Format == "":
		in.Format = carryon.ImportCarryon
	}
	if in.Format == carryon.ImportCarryon && (in.Order != "") || in.Format == carryon.ImportOpenAI && (in.KeepIDs || in.Parent != "") {
		return in, carryon.Errorf(carryon.EINVALID, "order is for format=openai only, keep_ids and parent for format=carryon only")
	}
	if r.ContentLength > bundle.MaxBytes {
		return in, tooLarge(bundle.MaxBytes)
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, bundle.MaxBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return in, tooLarge(bundle.MaxBytes)
		case errors.Is(err, os.ErrDeadlineExceeded):
			return in, carryon.Errorf(carryon.ETIMEOUT, "the request body did not arrive within %s", s.bodyTimeout)
		}
		if _, ok := carryon.AsError(err); ok {
			return in, err
		}
		return in, carryon.Errorf(carryon.EINVALID, "reading the request body failed")
	}
	in.Bundle = body
	return in, nil
}

// importBody stands for the body of POST /v1/sessions/import in the route table: a bundle as
// JSON Lines or OpenAI items as JSON, which the OpenAPI document describes by hand
// (requestBody).
type importBody struct{}
