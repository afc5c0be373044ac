package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/poll"
)

// openStream opens the event stream of run for key and returns its answer once the headers came.
func openStream(t *testing.T, e *env, key, runID string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", e.srv.URL+"/v1/runs/"+runID+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// waitingRun starts a run of alice that waits for a client tool's output, so its stream stays open.
func waitingRun(t *testing.T, e *env) *carryon.Run {
	t.Helper()
	s := e.newSession("waits")
	c := e.client(e.aliceKey)
	run, err := c.Start(ctx(t), s.ID, carryon.NewRun{Message: "/tool ask_user {}", Tools: []carryon.ClientTool{{Name: "ask_user"}}})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// A user has at most MaxStreamsPerUser event streams open, and at most MaxRequestsPerUser
// requests in flight: the next one is 429 too_many_requests with Retry-After, before anything
// runs; another user is not held back; a stream that ends frees its place.
func TestPerUserLimits(t *testing.T) {
	t.Parallel()
	t.Run("streams", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(c *httpapi.Config) { c.MaxStreamsPerUser = 3 })
		run := waitingRun(t, e)
		var open []*http.Response
		for range 3 {
			resp := openStream(t, e, e.aliceKey, run.ID)
			if resp.StatusCode != 200 {
				t.Fatalf("stream within the limit: %d", resp.StatusCode)
			}
			open = append(open, resp)
		}
		over := e.json("GET", "/v1/runs/"+run.ID+"/events", e.aliceKey, "")
		wantProblem(t, over, 429, carryon.ETOOMANY)
		if over.header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
		wantStatus(t, e.json("GET", "/v1/me", e.aliceKey, ""), 200)             // a plain request still passes
		if resp := openStream(t, e, e.bobKey, run.ID); resp.StatusCode != 404 { // bob is not held back (and does not see alice's run)
			t.Fatalf("bob: %d", resp.StatusCode)
		}
		open[0].Body.Close()
		poll.Eventually(t, "a closed stream to free its place", func() bool {
			resp := openStream(t, e, e.aliceKey, run.ID)
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	})
	t.Run("requests", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(c *httpapi.Config) { c.MaxRequestsPerUser, c.MaxStreamsPerUser = 2, -1 })
		run := waitingRun(t, e)
		for range 2 {
			if resp := openStream(t, e, e.aliceKey, run.ID); resp.StatusCode != 200 {
				t.Fatalf("stream within the limit: %d", resp.StatusCode)
			}
		}
		wantProblem(t, e.json("GET", "/v1/me", e.aliceKey, ""), 429, carryon.ETOOMANY)
		wantStatus(t, e.json("GET", "/v1/me", e.bobKey, ""), 200)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if _, err := e.client(e.aliceKey).Me(ctx); carryon.ErrorCode(err) != carryon.ETOOMANY {
			t.Fatalf("the Go client: %v", err)
		}
	})
}
