package httpapi

import "testing"

// TestMayLagRoutes guards the one place that decides which reads a replica may answer: never a
// write, never a read whose answer carries a version a write depends on, and a session list that
// looks a session up by its external id goes to the primary.
func TestMayLagRoutes(t *testing.T) {
	primaryOnly := map[string]bool{
		"GET /v1/sessions/{id}": true, "GET /v1/sessions/{id}/working_memory": true, "GET /v1/sessions/{id}/context": true,
		"GET /v1/runs/{id}": true, "GET /v1/runs/{id}/events": true, "GET /v1/memories/{namespace}/{key}": true,
		"GET /v1/me": true, "GET /readyz": true,
	}
	lagging := 0
	for _, rt := range routeTable() {
		name := rt.Method + " " + rt.Pattern
		if !rt.MayLag {
			continue
		}
		lagging++
		if rt.Write || rt.Versioned || rt.Auth == AuthPublic || primaryOnly[name] ||
			(rt.Method != "GET" && name != "POST /v1/memories/search") {
			t.Errorf("%s may be answered by a read replica", name)
		}
		if name == "GET /v1/sessions" {
			fresh := false
			for _, p := range rt.Query {
				fresh = fresh || p.Name == "external_id" && p.Fresh
			}
			if !fresh {
				t.Errorf("GET /v1/sessions?external_id= may be answered by a read replica")
			}
		}
	}
	if lagging == 0 {
		t.Fatal("no route may be answered by a read replica")
	}
}
