package carryon

// Import formats: what the body of POST /v1/sessions/import is (docs/EXPORT.md).
const (
	// ImportCarryon is a session bundle that GET /v1/sessions/{id}/export answered.
	ImportCarryon = "carryon"
	// ImportOpenAI is the JSON of OpenAI's GET /v1/conversations/{id}/items: one list page, several
	// concatenated, or an array of pages.
	ImportOpenAI = "openai"
)

// ImportInput is an import of a session for the caller.
type ImportInput struct {
	// Bundle is the body: a bundle, or OpenAI conversation items (Format).
	Bundle []byte `json:"-"`
	// Format is ImportCarryon (the default) or ImportOpenAI.
	Format string `json:"format,omitempty"`
	// KeepIDs keeps the bundle's session, run and action ids (and its external id) instead of
	// making new ones; an id that exists, the caller's or anyone's, refuses the import (ECONFLICT).
	KeepIDs bool `json:"keep_ids,omitempty"`
	// Parent, for a bundle of a fork, names the caller's session the fork is linked to again;
	// default the bundle's parent id, which must then be a session of the caller.
	Parent string `json:"parent,omitempty"`
	// Order is the order of OpenAI items in their pages: "desc" (the default of OpenAI's list,
	// newest first) or "asc".
	Order string `json:"order,omitempty"`
	RetryOptions
}

// ImportResult is the session an import made, and how many rows of each kind it stored.
type ImportResult struct {
	Session *Session         `json:"session"`
	Counts  map[string]int64 `json:"counts"`
}

// WrittenSession is the session the import made.
func (r *ImportResult) WrittenSession() string {
	if r == nil || r.Session == nil {
		return ""
	}
	return r.Session.ID
}
