package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"testing"
)

// TestSessionsLsPages: `sessions ls` follows next_cursor through every page unless --limit is
// given, and --limit N gives the newest N with the cursor of the rest.
func TestSessionsLsPages(t *testing.T) {
	srv := startServer(t, t.TempDir())
	key := localKey(t, srv.data)
	const n = 2*listPageSize + 5
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int, n)
	for i := range n {
		work <- i
	}
	close(work)
	for range 4 {
		wg.Go(func() {
			for i := range work {
				r, err := do(srv.url, key, "POST", "/v1/sessions", map[string]any{"title": fmt.Sprintf("s%d", i)})
				if err == nil && r.status != 201 {
					err = fmt.Errorf("POST /v1/sessions = %d: %s", r.status, r.body)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	ids := regexp.MustCompile(`(?m)^sess_[a-z0-9]+`).FindAllString(cli(t, srv, "sessions", "ls"), -1)
	if len(ids) != n {
		t.Fatalf("sessions ls lists %d sessions of %d", len(ids), n)
	}
	if u := slices.Compact(slices.Sorted(slices.Values(ids))); len(u) != n {
		t.Fatalf("sessions ls lists %d distinct sessions of %d", len(u), n)
	}

	var all, newest struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(cli(t, srv, "sessions", "ls", "--json")), &all); err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != n || all.NextCursor != nil {
		t.Fatalf("sessions ls --json: %d items, next_cursor %v", len(all.Items), all.NextCursor)
	}
	limit := listPageSize + listPageSize/2 // two requests
	if err := json.Unmarshal([]byte(cli(t, srv, "sessions", "ls", "--json", "--limit", fmt.Sprint(limit))), &newest); err != nil {
		t.Fatal(err)
	}
	if len(newest.Items) != limit || newest.NextCursor == nil || *newest.NextCursor == "" {
		t.Fatalf("sessions ls --limit %d: %d items, next_cursor %v", limit, len(newest.Items), newest.NextCursor)
	}
	for i, it := range newest.Items {
		if it.ID != all.Items[i].ID {
			t.Fatalf("sessions ls --limit %d: item %d is %s, the full list has %s", limit, i, it.ID, all.Items[i].ID)
		}
	}
	e := envMap(map[string]string{"CARRYON_SERVER": srv.url, "CARRYON_DATA": srv.data})
	var out bytes.Buffer
	if err := run(context.Background(), []string{"sessions", "ls", "--limit", "-1"}, e, nil, &out, &out); !isUsage(err) {
		t.Fatalf("sessions ls --limit -1: %v, want a usage error", err)
	}
}
