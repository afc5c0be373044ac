package httpapi_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// waitingWrite starts a run of the writer profile of an env with approvals (its write_file asks
// for approval before every call) whose model calls write_file, and returns it once it waits for the decision, with the
// action that waits.
func waitingWrite(t *testing.T, e *env) (*carryon.Session, *carryon.Run, *carryon.Action) {
	t.Helper()
	c := e.client(e.aliceKey)
	s, err := c.Create(ctx(t), carryon.NewSession{Title: "writes", Agent: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Start(ctx(t), s.ID, carryon.NewRun{Message: `/tool write_file {"path":"notes.md","content":"approved text\n"}`})
	if err != nil {
		t.Fatal(err)
	}
	events, err := c.Events(ctx(t), run.ID, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	for {
		ev, ok, err := events.Next()
		if err != nil || !ok {
			t.Fatalf("the run's stream ended (%v) before it waited for an approval", err)
		}
		if ev.Type == carryon.EventRunWaiting {
			break
		}
		if ev.Type == carryon.EventRunFinished || ev.Type == carryon.EventRunFailed {
			t.Fatalf("the run ended (%s %s) without waiting for an approval", ev.Type, ev.Data)
		}
	}
	acts, err := c.Actions(ctx(t), run.ID)
	if err != nil || len(acts) != 1 || acts[0].Tool != "write_file" || acts[0].Status != carryon.ActionWaiting {
		t.Fatalf("journal = %+v, %v; want write_file waiting", acts, err)
	}
	return s, run, acts[0]
}

// TestApproveRefusesFieldsOfAnotherDecision: result goes with mark_done only and reason with
// reject only; with any other decision each is a 400 problem (invalid_request) whose detail names
// the field and the decision it goes with, and the refusal changes nothing: the run still waits,
// its action is untouched, no event is stored, and the request id stays free. (The approve with
// a result was answered 200 and the result was dropped.)
func TestApproveRefusesFieldsOfAnotherDecision(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, envOptions{approvals: true}, nil)
	_, run, act := waitingWrite(t, e)
	before := e.json("GET", "/v1/runs/"+run.ID+"/events?follow=false", e.aliceKey, "")
	for _, c := range []struct{ body, field, with string }{
		{`{"decision":"approve","result":"it is done"}`, "result", "mark_done"},
		{`{"decision":"reject","result":"it is done"}`, "result", "mark_done"},
		{`{"decision":"skip","result":"it is done"}`, "result", "mark_done"},
		{`{"decision":"approve","reason":"looks fine"}`, "reason", "reject"},
		{`{"decision":"mark_done","reason":"looks fine"}`, "reason", "reject"},
	} {
		body := `{"action_id":"` + act.ID + `",` + c.body[1:]
		a := e.json("POST", "/v1/runs/"+run.ID+"/approve", e.aliceKey, body, "Idempotency-Key", "decide-1")
		wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)
		if d := a.problem.Detail; !strings.Contains(d, c.field) || !strings.Contains(d, c.with) {
			t.Errorf("%s: detail %q does not name %s and %s", body, d, c.field, c.with)
		}
	}
	got := decodeBody[carryon.Run](t, e.json("GET", "/v1/runs/"+run.ID, e.aliceKey, ""))
	if got.Status != carryon.RunWaitingApproval || got.PendingAction == nil || got.PendingAction.Status != carryon.ActionWaiting ||
		got.PendingAction.Approval != carryon.ApprovalRequired || string(got.PendingAction.Args) != string(act.Args) {
		t.Fatalf("after the refusals the run is %s with pending %+v", got.Status, got.PendingAction)
	}
	if after := e.json("GET", "/v1/runs/"+run.ID+"/events?follow=false", e.aliceKey, ""); string(after.body) != string(before.body) {
		t.Fatalf("the refusals stored events:\n%s", after.body[len(before.body):])
	}
	// The request id of the refusals is free: the right decision with it is taken.
	ok := e.json("POST", "/v1/runs/"+run.ID+"/approve", e.aliceKey, `{"action_id":"`+act.ID+`","decision":"approve"}`, "Idempotency-Key", "decide-1")
	wantStatus(t, ok, http.StatusOK)
	if ok.header.Get("Idempotent-Replayed") != "" {
		t.Fatal("the approval was answered as a replay of a refusal")
	}
	if done := waitFinished(t, e, run.ID); done.Status != carryon.RunSucceeded {
		t.Fatalf("after the approval the run is %s (%s)", done.Status, done.Error)
	}
}

// TestApproveOnClosedSession: approving a waiting write_file once its session is closed is a 409
// problem (session_closed) on the native route, again on a repeat with the same Idempotency-Key;
// the file is not written and the run ends failed with the reason.
func TestApproveOnClosedSession(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, envOptions{approvals: true}, nil)
	s, run, act := waitingWrite(t, e)
	wantStatus(t, e.json("POST", "/v1/sessions/"+s.ID+"/close", e.aliceKey, ""), http.StatusOK)
	for range 2 {
		a := e.json("POST", "/v1/runs/"+run.ID+"/approve", e.aliceKey, `{"action_id":"`+act.ID+`","decision":"approve"}`, "Idempotency-Key", "closed-1")
		wantProblem(t, a, http.StatusConflict, carryon.ECLOSED)
	}
	got := decodeBody[carryon.Run](t, e.json("GET", "/v1/runs/"+run.ID, e.aliceKey, ""))
	if got.Status != carryon.RunFailed || !strings.Contains(got.Error, "was closed while the run waited for a decision") {
		t.Fatalf("run = %s %q, want failed with the reason", got.Status, got.Error)
	}
	if _, err := os.Stat(filepath.Join(e.workspaces, s.ID, "notes.md")); !os.IsNotExist(err) {
		t.Fatalf("notes.md was written on a closed session (stat: %v)", err)
	}
}
