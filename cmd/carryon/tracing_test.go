package main

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP traces endpoint: it keeps the names of the spans it is sent, by
// trace id.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans map[string][]string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{spans: map[string][]string{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var in coltrace.ExportTraceServiceRequest
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &in) != nil {
			t.Errorf("OTLP receiver: unexpected %s %s (%s)", req.Method, req.URL.Path, req.Header.Get("Content-Type"))
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range in.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					id := hex.EncodeToString(s.TraceId)
					r.spans[id] = append(r.spans[id], s.Name)
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) names(traceID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.spans[traceID]...)
}

// TestServeSendsTracesOverOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT set, a run of the scripted agent
// reaches the endpoint as one trace, the one the run's answer names, and the server's log lines
// of the run carry that trace id.
func TestServeSendsTracesOverOTLP(t *testing.T) {
	t.Parallel()
	recv := newOTLPReceiver(t)
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL, "OTEL_BSP_SCHEDULE_DELAY=50"})
	key := localKey(t, data)
	chat := must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": "Write a short guide to brewing green tea: research the water temperature, then draft the steps"}, 200).json(t)
	run := must(t, srv.url, key, "GET", "/v1/runs/"+chat["run_id"].(string), nil, 200).json(t)
	traceID, _ := run["trace_id"].(string)
	if len(traceID) != 32 {
		t.Fatalf("run trace_id = %q", traceID)
	}
	var got string
	if !within(20*time.Second, func() bool {
		got = strings.Join(recv.names(traceID), ", ")
		return strings.Contains(got, "invoke_agent default") && strings.Contains(got, "chat scripted") && strings.Contains(got, "execute_tool ")
	}) {
		t.Fatalf("spans of trace %s at the OTLP endpoint: [%s]; want invoke_agent, chat and execute_tool spans", traceID, got)
	}
	if logs := srv.logs.String(); !strings.Contains(logs, "trace_id="+traceID) {
		t.Errorf("no log line names trace_id=%s:\n%s", traceID, logs)
	}
}
