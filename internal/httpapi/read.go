package httpapi

import "net/http"

// readRoute serves a read that answers 200 with its result as JSON: call reads the result (q
// holds the route's query parameters, which checkRoute has checked); an error answers its
// problem. Reads with a conditional or streamed answer (a session, a working memory, a run's
// events) write their answers themselves.
func readRoute[Out any](s *server, call func(r *http.Request, q *query) (Out, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := call(r, &query{values: r.URL.Query()})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeStreamed(w, r, out)
	}
}

// orEmpty is items, or an empty list for none: every listing answers [], never null.
func orEmpty[T any](items []T) []T {
	if items == nil {
		return []T{}
	}
	return items
}
