package httpapi

import (
	"net/http"

	"github.com/carryon-hub/carryon/internal/store"
)

// ReadHeader is the header of an answer a read replica served, with the value "replica"; an
// answer of the primary has none.
const ReadHeader = "X-Carryon-Read"

// freshQuery reports whether r gives a query parameter that makes its MayLag route's read a
// lookup for the primary (Param.Fresh).
func freshQuery(r *http.Request, params []Param) bool {
	q := r.URL.Query()
	for _, p := range params {
		if p.Fresh && q.Has(p.Name) {
			return true
		}
	}
	return false
}

// replicaWriter adds X-Carryon-Read: replica to the answer of a MayLag route when a replica served
// its read: the handler has read by the time it writes its status.
type replicaWriter struct {
	http.ResponseWriter
	sr      *store.StaleRead
	written bool
}

func (w *replicaWriter) WriteHeader(code int) {
	if !w.written {
		w.written = true
		if w.sr.Replica() {
			w.Header().Set(ReadHeader, "replica")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *replicaWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the underlying ResponseWriter.
func (w *replicaWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
