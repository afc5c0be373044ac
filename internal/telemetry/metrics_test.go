package telemetry_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/telemetry"
)

// scrape reads /metrics in the text format and parses it with Prometheus's own parser.
func (s *server) scrape(t *testing.T) ([]byte, map[string]*dto.MetricFamily) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", s.url+"/metrics", nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics = %d %s", resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the Prometheus text parser refuses /metrics: %v\n%s", err, body)
	}
	return body, fams
}

// value is the value of the series of family name whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestMetricsAfterARun(t *testing.T) {
	srv := newServer(t, func(reg *prometheus.Registry) *telemetry.Telemetry {
		return telemetry.New(telemetry.Options{Registerer: reg})
	})
	sessionID, run := srv.runToEnd(t)
	// The same start again is a replay; the same key with another message a conflict.
	srv.call(t, "POST", "/v1/sessions/"+sessionID+"/runs", map[string]any{"message": "write notes.txt, then read it"},
		map[string]string{"Idempotency-Key": "start-1"}, 202, nil)
	srv.call(t, "POST", "/v1/sessions/"+sessionID+"/runs", map[string]any{"message": "something else"},
		map[string]string{"Idempotency-Key": "start-1"}, 422, nil)
	srv.call(t, "PATCH", "/v1/sessions/"+sessionID, map[string]any{"title": "stale", "expected_version": 1}, nil, 409, nil)

	// A runner counts the run's end just after storing it: wait for that count.
	var body []byte
	var fams map[string]*dto.MetricFamily
	poll.Within(10*time.Second, func() bool {
		body, fams = srv.scrape(t)
		_, ok := value(fams, "carryon_runs_finished_total", map[string]string{"status": "succeeded"})
		return ok
	})
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	agent := map[string]string{"agent": "default"}
	model := map[string]string{"gen_ai_operation_name": "chat", "gen_ai_provider_name": "openai", "gen_ai_request_model": "gpt-test", "gen_ai_response_model": "gpt-test"}
	with := func(base map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for bk, bv := range base {
			out[bk] = bv
		}
		return out
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64 // the least value (a histogram's count)
	}{
		{"carryon_runs_started_total", agent, 1},
		{"carryon_runs_finished_total", with(agent, "status", string(run["status"].(string))), 1},
		{"carryon_run_duration_seconds", with(agent, "status", "succeeded"), 1},
		{"carryon_run_queue_wait_seconds", agent, 1},
		{"gen_ai_client_operation_duration_seconds", with(model, "error_type", ""), 2},
		{"gen_ai_client_token_usage", with(model, "gen_ai_token_type", "input"), 2},
		{"gen_ai_client_token_usage", with(model, "gen_ai_token_type", "output"), 2},
		{"carryon_tool_calls_total", map[string]string{"tool": "write_file", "effect": "reconcilable", "status": "succeeded"}, 1},
		{"carryon_tool_calls_total", map[string]string{"tool": "read_file", "effect": "read", "status": "succeeded"}, 1},
		{"carryon_tool_call_duration_seconds", map[string]string{"tool": "read_file"}, 1},
		{"carryon_runs_active", map[string]string{"status": "waiting_approval"}, 0},
		{"carryon_approvals_waiting", nil, 0},
		{"carryon_lease_takeovers_total", nil, 0},
		{"carryon_sweeps_total", map[string]string{"sweeper": "sessions", "outcome": "ok"}, 0},
		{"carryon_purged_total", map[string]string{"kind": "sessions"}, 0},
		{"carryon_request_id_replays_total", map[string]string{"front": "http"}, 1},
		{"carryon_write_conflicts_total", map[string]string{"code": "idempotency_key_reused"}, 1},
		{"carryon_write_conflicts_total", map[string]string{"code": "version_conflict"}, 1},
		{"carryon_http_requests_total", map[string]string{"route": "/v1/sessions/{id}/runs", "status": "202"}, 2},
		{"carryon_http_request_duration_seconds", map[string]string{"route": "/v1/runs/{id}"}, 1},
	} {
		v, ok := value(fams, c.name, c.labels)
		if !ok || v < c.want {
			t.Errorf("%s%v = %v (present %v), want at least %v", c.name, c.labels, v, ok, c.want)
		}
	}
	// No label carries a session, user or run id.
	for name, f := range fams {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if v := l.GetValue(); bytes.Contains([]byte(v), []byte(sessionID)) || bytes.Contains([]byte(v), []byte(run["id"].(string))) {
					t.Errorf("%s has an id in label %s=%q", name, l.GetName(), v)
				}
			}
		}
	}
}
