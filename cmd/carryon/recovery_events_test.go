package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// storedEvent is a run event as GET /v1/runs/{id}/events sends it.
type storedEvent struct {
	Seq  int64           `json:"seq"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// storedEvents reads every stored event of the run (the stream without follow).
func storedEvents(t *testing.T, srv *server, key, runID string) []storedEvent {
	t.Helper()
	body := must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/events?follow=false", nil, 200).body
	var out []storedEvent
	for _, block := range strings.Split(string(body), "\n\n") {
		for _, line := range strings.Split(block, "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			var e storedEvent
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			out = append(out, e)
		}
	}
	return out
}

// checkEvents asserts that the run's event log tells what the store holds, no more and no less:
// seqs from 1 without a gap; run.queued first; one run.started per attempt; one run.finished, last,
// succeeded with the run's reply; every message of the run after its trigger in exactly one
// message.appended, and every message an event names stored with the same seq, role and text;
// for every action of the journal a last tool.finished that says what the journal says, and no
// tool.finished for an action the journal does not hold finished; one memory.updated per stored
// working memory change of the run.
func checkEvents(t *testing.T, srv *server, key, sid, runID string) {
	t.Helper()
	run := must(t, srv.url, key, "GET", "/v1/runs/"+runID, nil, 200).json(t)
	evs := storedEvents(t, srv, key, runID)
	var types []string
	for i, e := range evs {
		types = append(types, e.Type)
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: %v", i, e.Seq, types)
		}
	}
	if len(evs) < 2 || evs[0].Type != "run.queued" || evs[len(evs)-1].Type != "run.finished" {
		t.Fatalf("the log does not run from run.queued to run.finished: %v", types)
	}
	count := func(typ string) int {
		n := 0
		for _, e := range evs {
			if e.Type == typ {
				n++
			}
		}
		return n
	}
	if n, attempts := count("run.started"), int(run["attempt"].(float64)); n != attempts {
		t.Fatalf("%d run.started for %d attempts: %v", n, attempts, types)
	}
	if n := count("run.finished"); n != 1 {
		t.Fatalf("%d run.finished: %v", n, types)
	}
	var end struct {
		Status string `json:"status"`
		Reply  string `json:"reply"`
	}
	_ = json.Unmarshal(evs[len(evs)-1].Data, &end)
	if end.Status != "succeeded" || end.Reply != run["reply"] {
		t.Fatalf("run.finished says %s %q, the run %v %q", end.Status, end.Reply, run["status"], run["reply"])
	}

	// Messages: the stored ones of the run against the ones the events name.
	type msg struct {
		Seq     int64  `json:"seq"`
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	stored := map[int64]msg{}
	var page struct {
		Items []struct {
			msg
			RunID string `json:"run_id"`
		} `json:"items"`
	}
	if err := json.Unmarshal(must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages?limit=100", nil, 200).body, &page); err != nil {
		t.Fatal(err)
	}
	trigger := int64(run["trigger_seq"].(float64))
	for _, m := range page.Items {
		if m.RunID == runID && m.Seq != trigger {
			stored[m.Seq] = m.msg
		}
	}
	told := map[int64]int{}
	for _, e := range evs {
		if e.Type != "message.appended" {
			continue
		}
		var res struct {
			Messages []msg `json:"messages"`
		}
		if err := json.Unmarshal(e.Data, &res); err != nil || len(res.Messages) == 0 {
			t.Fatalf("message.appended %d without messages: %s", e.Seq, e.Data)
		}
		for _, m := range res.Messages {
			told[m.Seq]++
			if s, ok := stored[m.Seq]; !ok || s != m {
				t.Fatalf("message.appended %d names message %d (%s %.40q), stored: %v %+v", e.Seq, m.Seq, m.Role, m.Content, ok, s)
			}
		}
	}
	for seq := range stored {
		if told[seq] != 1 {
			t.Fatalf("stored message %d is in %d message.appended events (want 1): %v", seq, told[seq], types)
		}
	}

	// Actions: the journal against the last tool.finished of each.
	type action struct {
		ID     string `json:"id"`
		Tool   string `json:"tool"`
		Status string `json:"status"`
		Result string `json:"result"`
	}
	var acts struct {
		Items []action `json:"items"`
	}
	if err := json.Unmarshal(must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).body, &acts); err != nil {
		t.Fatal(err)
	}
	journal := map[string]action{}
	for _, a := range acts.Items {
		journal[a.ID] = a
	}
	last := map[string]action{}
	for _, e := range evs {
		if e.Type != "tool.finished" {
			continue
		}
		var a action
		_ = json.Unmarshal(e.Data, &a)
		if _, ok := journal[a.ID]; !ok {
			t.Fatalf("tool.finished %d for action %s, which the journal does not hold", e.Seq, a.ID)
		}
		last[a.ID] = a
	}
	for id, a := range journal {
		if got, ok := last[id]; !ok || !reflect.DeepEqual(got, a) {
			t.Fatalf("action %s (%s): the journal says %s %.60q, its last tool.finished %v %+v", id, a.Tool, a.Status, a.Result, ok, got)
		}
	}

	// Working memory: one memory.updated per revision the run wrote.
	var revs struct {
		Items []struct {
			RunID string `json:"run_id"`
		} `json:"items"`
	}
	if err := json.Unmarshal(must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/memory/history?limit=100", nil, 200).body, &revs); err != nil {
		t.Fatal(err)
	}
	byRun := 0
	for _, r := range revs.Items {
		if r.RunID == runID {
			byRun++
		}
	}
	if n := count("memory.updated"); n != min(byRun, 1) {
		t.Fatalf("%d memory.updated events for %d revisions of the run in one step: %v", n, byRun, types)
	}
}

// responseView is what the Responses API shows of a run to the OpenAI Go client, without what
// differs from run to run (ids, times): its status, output text and output items (type, status,
// text).
func responseView(t *testing.T, srv *server, key, runID string) string {
	t.Helper()
	c := openai.NewClient(option.WithBaseURL(srv.url+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
	r, err := c.Responses.Get(t.Context(), runID, responses.ResponseGetParams{})
	if err != nil {
		t.Fatalf("get the response of %s: %v", runID, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q;", r.Status, r.OutputText())
	for _, o := range r.Output {
		fmt.Fprintf(&b, " %s/%s", o.Type, o.Status)
		for _, c := range o.Content {
			fmt.Fprintf(&b, " %q", c.Text)
		}
	}
	return b.String()
}
