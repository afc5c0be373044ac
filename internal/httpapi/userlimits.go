package httpapi

import (
	"net/http"
	"strings"
	"sync"

	"github.com/carryon-hub/carryon"
)

// Limits per user. One user's requests must not take the server from the others: each user may
// have at most so many requests in flight at once, and of them at most so many event streams
// open (every front door counts: the native API, the OpenAI-compatible routes and /mcp). A
// request over either is answered 429 too_many_requests with Retry-After before anything runs.

// Defaults of Config.MaxRequestsPerUser and Config.MaxStreamsPerUser.
const (
	DefaultMaxRequestsPerUser = 256
	DefaultMaxStreamsPerUser  = 64
)

// userLimits counts each user's requests in flight and streams open.
type userLimits struct {
	maxRequests, maxStreams int // <= 0: no bound
	mu                      sync.Mutex
	requests, streams       map[string]int
}

func newUserLimits(maxRequests, maxStreams int) *userLimits {
	if maxRequests == 0 {
		maxRequests = DefaultMaxRequestsPerUser
	}
	if maxStreams == 0 {
		maxStreams = DefaultMaxStreamsPerUser
	}
	return &userLimits{maxRequests: maxRequests, maxStreams: maxStreams, requests: map[string]int{}, streams: map[string]int{}}
}

// enter counts a request of user (a stream when stream is set) and returns the function that
// uncounts it, or ETOOMANY when the user is at a bound.
func (l *userLimits) enter(user string, stream bool) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.maxRequests > 0 && l.requests[user] >= l.maxRequests {
		return nil, tooMany("requests in flight", l.maxRequests)
	}
	if stream && l.maxStreams > 0 && l.streams[user] >= l.maxStreams {
		return nil, tooMany("event streams open", l.maxStreams)
	}
	l.requests[user]++
	if stream {
		l.streams[user]++
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.requests[user]--; l.requests[user] == 0 {
			delete(l.requests, user)
		}
		if stream {
			if l.streams[user]--; l.streams[user] == 0 {
				delete(l.streams, user)
			}
		}
	}, nil
}

func tooMany(what string, limit int) error {
	e := carryon.Errorf(carryon.ETOOMANY, "this user has %d %s, the most allowed; retry when one has ended", limit, what)
	e.RetryAfterSeconds = 1
	return e
}

// isStream says whether r asks for an event stream: Server-Sent Events by its Accept header, a
// stream=true query (the Responses API's GET), a run's events (always a stream) or /mcp's GET.
func isStream(r *http.Request) bool {
	switch {
	case strings.Contains(r.Header.Get("Accept"), "text/event-stream"),
		r.URL.Query().Get("stream") == "true",
		r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/events"),
		r.Method == http.MethodGet && r.URL.Path == MCPPath:
		return true
	}
	return false
}
