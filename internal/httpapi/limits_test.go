package httpapi_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/limits"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// A rate an admin sets for alice holds her to its bucket: each answer says what is left
// (RateLimit-Policy, RateLimit), the request past the burst is 429 with Retry-After and the same
// fields, bob is not held back and gets no fields; setting her limits back to the defaults frees her.
func TestRateLimitPerUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	// One token every 1000 s: the bucket does not refill while the test runs.
	wantStatus(t, e.json("PUT", "/v1/users/alice/limits", e.adminKey, `{"requests_per_second": 0.001, "request_burst": 3}`), 200)
	for i := range 3 {
		a := e.json("GET", "/v1/me", e.aliceKey, "")
		wantStatus(t, a, 200)
		if got, want := a.header.Get("RateLimit-Policy"), `"rate";q=3;w=3000`; got != want {
			t.Errorf("RateLimit-Policy = %q, want %q", got, want)
		}
		if got, want := a.header.Get("RateLimit"), `"rate";r=`+strconv.Itoa(2-i)+`;t=`; !strings.HasPrefix(got, want) {
			t.Errorf("request %d: RateLimit = %q, want it to start %q", i+1, got, want)
		}
	}
	over := e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"not made"}`)
	wantProblem(t, over, 429, carryon.ETOOMANY)
	if ra, err := strconv.Atoi(over.header.Get("Retry-After")); err != nil || ra < 900 || ra > 1000 {
		t.Errorf("Retry-After = %q, want the ~1000 s until the next token", over.header.Get("Retry-After"))
	}
	if got := over.header.Get("RateLimit"); !strings.HasPrefix(got, `"rate";r=0;t=`) {
		t.Errorf("429's RateLimit = %q, want r=0", got)
	}
	if over.header.Get("RateLimit-Policy") == "" {
		t.Error("429 without RateLimit-Policy")
	}
	if m := string(e.json("GET", "/metrics", "", "").body); !strings.Contains(m, `carryon_limit_refusals_total{limit="rate"} 1`) {
		t.Errorf("/metrics does not count the refusal by the rate")
	}
	b := e.json("GET", "/v1/me", e.bobKey, "")
	wantStatus(t, b, 200)
	if b.header.Get("RateLimit") != "" || b.header.Get("RateLimit-Policy") != "" {
		t.Errorf("bob, with no rate, got RateLimit %q and RateLimit-Policy %q", b.header.Get("RateLimit"), b.header.Get("RateLimit-Policy"))
	}
	got := decodeBody[carryon.UserLimits](t, e.json("GET", "/v1/users/alice/limits", e.adminKey, ""))
	if got.Limits.RequestsPerSecond == nil || *got.Limits.RequestsPerSecond != 0.001 || got.Effective.MaxStreams == nil ||
		*got.Effective.MaxStreams != httpapi.DefaultMaxStreamsPerUser || got.UpdatedAt == nil {
		t.Errorf("GET limits = %+v, want alice's rate over the default streams", got)
	}
	wantStatus(t, e.json("PUT", "/v1/users/alice/limits", e.adminKey, `{}`), 200)
	a := e.json("GET", "/v1/me", e.aliceKey, "")
	wantStatus(t, a, 200)
	if a.header.Get("RateLimit") != "" {
		t.Errorf("after her limits went back to the defaults alice still gets RateLimit %q", a.header.Get("RateLimit"))
	}
}

// Bad limits are 400 and change nothing; only an admin reads or sets limits; an unknown user is 404.
func TestLimitsBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	wantStatus(t, e.json("PUT", "/v1/users/alice/limits", e.adminKey, `{"max_concurrent_runs": 2}`), 200)
	before := string(e.json("GET", "/v1/users/alice/limits", e.adminKey, "").body)
	for _, body := range []string{
		`{"max_stored_bytes": -1}`, `{"requests_per_second": -0.5}`, `{"requests_per_second": "fast"}`,
		`{"max_streams": 1.5}`, `{"max_runs": 1}`, `{"request_burst": true}`, `[]`,
	} {
		a := e.json("PUT", "/v1/users/alice/limits", e.adminKey, body)
		wantProblem(t, a, 400, carryon.EINVALID)
	}
	if after := string(e.json("GET", "/v1/users/alice/limits", e.adminKey, "").body); after != before {
		t.Errorf("bad input changed the limits:\n%s\nbecame\n%s", before, after)
	}
	wantProblem(t, e.json("PUT", "/v1/users/alice/limits", e.aliceKey, `{}`), 403, carryon.EFORBIDDEN)
	wantProblem(t, e.json("GET", "/v1/users/bob/limits", e.aliceKey, ""), 403, carryon.EFORBIDDEN)
	wantProblem(t, e.json("PUT", "/v1/users/nobody/limits", e.adminKey, `{}`), 404, carryon.ENOTFOUND)
	// A repeated PUT answers the same.
	first := e.json("PUT", "/v1/users/bob/limits", e.adminKey, `{"max_streams": 5}`)
	if again := e.json("PUT", "/v1/users/bob/limits", e.adminKey, `{"max_streams": 5}`); string(again.body) != string(first.body) {
		t.Errorf("a repeated PUT answered\n%s\nthe first\n%s", again.body, first.body)
	}
}

// Past its quota a user's writes are 507 insufficient_storage with a detail; reads, close and
// delete still work, and deleting gets the user under the quota again.
func TestStorageQuota(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, db, func(c *httpapi.Config) {
		c.Limits = limits.New(limits.Config{Store: db, Defaults: httpapi.DefaultLimits(0, 0), Recount: time.Nanosecond})
	})
	wantStatus(t, e.json("PUT", "/v1/users/alice/limits", e.adminKey, `{"max_stored_bytes": 100}`), 200)
	s := e.newSession("quota")
	big := strings.Repeat("x", 150)
	wantStatus(t, e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, `{"messages":[{"role":"user","content":"`+big+`"}]}`), 201)
	// The count is made again in the background: a write or two may pass before it sees the 150.
	var over *answer
	poll.Eventually(t, "a write past the quota to be refused", func() bool {
		over = e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, `{"messages":[{"role":"user","content":"more"}]}`)
		return over.status != 201
	})
	wantProblem(t, over, 507, carryon.EQUOTA)
	if !strings.Contains(over.problem.Detail, "may store 100") {
		t.Errorf("detail %q does not say the quota", over.problem.Detail)
	}
	wantProblem(t, e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"another"}`), 507, carryon.EQUOTA)
	wantProblem(t, e.json("PUT", "/v1/memories/notes/k", e.aliceKey, `{"value":"v"}`), 507, carryon.EQUOTA)
	view := decodeBody[carryon.SessionView](t, e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, ""))
	if len(view.Messages) < 1 || view.Messages[0].Content != big {
		t.Errorf("the session holds %d messages, want the one written before the quota first", len(view.Messages))
	}
	wantStatus(t, e.json("GET", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, ""), 200)
	wantStatus(t, e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.bobKey, `{"messages":[{"role":"user","content":"x"}]}`), 404) // bob is not held back: 404 is his answer for alice's session
	wantStatus(t, e.json("POST", "/v1/sessions", e.bobKey, `{"title":"bob's"}`), 201)
	got := decodeBody[carryon.UserLimits](t, e.json("GET", "/v1/users/alice/limits", e.adminKey, ""))
	if got.StoredBytes < 150 {
		t.Errorf("stored_bytes = %d, want at least the 150 of the message", got.StoredBytes)
	}
	wantStatus(t, e.json("POST", "/v1/sessions/"+s.ID+"/close", e.aliceKey, `{}`), 200)
	wantStatus(t, e.json("DELETE", "/v1/sessions/"+s.ID, e.aliceKey, ""), 204)
	poll.Eventually(t, "a write to pass again once the count has seen the delete", func() bool {
		return e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"room again"}`).status == 201
	})
}
