package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/chromedp/chromedp"
)

// waterfallOverflowJS is overflowJS over the waterfalls and the usage charts as well.
var waterfallOverflowJS = strings.Replace(overflowJS, `const sel = '`, `const sel = '.waterfall, .waterfall *, .usage-chart, .usage-chart *, .context-bar, .context-bar *, `, 1)

// wantBars is the waterfall the API's record of run runID implies, as the bars' labels without
// their lengths, in time order: per step, its model call (with the input tokens its
// message.appended event says the step's model calls used, and the output tokens of its
// assistant message), then its tool calls in order (tool, effect class, status), a call that
// waited for a decision after its wait; and the final model call.
func wantBars(t *testing.T, srv *server, key, sid, runID string) []string {
	t.Helper()
	url := srv.url
	input := map[float64]float64{} // an assistant message's seq: its call's input tokens
	for _, e := range storedEvents(t, srv, key, runID) {
		var d struct {
			Messages []struct {
				Seq  float64 `json:"seq"`
				Role string  `json:"role"`
			} `json:"messages"`
			Usage *struct {
				InputTokens float64 `json:"input_tokens"`
			} `json:"usage"`
		}
		if e.Type != "message.appended" || json.Unmarshal(e.Data, &d) != nil || d.Usage == nil {
			continue
		}
		for _, m := range d.Messages {
			if m.Role == "assistant" {
				input[m.Seq] = d.Usage.InputTokens
			}
		}
	}
	var assistant []map[string]any
	for _, m := range must(t, url, key, "GET", "/v1/sessions/"+sid+"/messages?limit=1000", nil, 200).json(t)["items"].([]any) {
		if m := m.(map[string]any); m["run_id"] == runID && m["role"] == "assistant" {
			assistant = append(assistant, m)
		}
	}
	var actions []map[string]any
	for _, a := range must(t, url, key, "GET", "/v1/runs/"+runID+"/actions?limit=1000", nil, 200).json(t)["items"].([]any) {
		actions = append(actions, a.(map[string]any))
	}
	sort.Slice(actions, func(i, j int) bool {
		ai, aj := actions[i], actions[j]
		if ai["step"] != aj["step"] {
			return ai["step"].(float64) < aj["step"].(float64)
		}
		return ai["index"].(float64) < aj["index"].(float64)
	})
	var want []string
	for i, m := range assistant {
		in, ok := input[m["seq"].(float64)]
		if !ok || in <= 0 {
			t.Fatalf("the message.appended event of run %s's assistant message %v says no input tokens", runID, m["seq"])
		}
		want = append(want, fmt.Sprintf("model call %d, %v input tokens, %v output tokens", i+1, in, m["tokens"]))
		for _, a := range actions {
			if a["step"].(float64) != float64(i+1) {
				continue
			}
			if d, _ := a["approval"].(string); d != "" {
				decided := map[string]string{"approved": "approved", "edited": "approved", "rejected": "rejected"}[d]
				want = append(want, fmt.Sprintf("waiting for approval of %v, %s", a["tool"], decided))
			}
			want = append(want, fmt.Sprintf("%v, %v, %v", a["tool"], a["effect"], a["status"]))
		}
	}
	return want
}

// barsOf reads the labels of the bars of run runID's waterfall, their lengths cut off, and
// fails unless the bars start in time order.
func barsOf(t *testing.T, p *browserPage, runID string) []string {
	t.Helper()
	var got struct {
		Labels []string  `json:"labels"`
		Lefts  []float64 `json:"lefts"`
	}
	raw := p.eval(`JSON.stringify((() => { const rows = [...document.querySelectorAll('#run-` + runID + ` .wf-row')];
	  return {labels: rows.map((b) => b.getAttribute('aria-label')), lefts: rows.map((b) => { const r = b.querySelector('.wf-bar').getBoundingClientRect(); return r.left; })}; })())`)
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(got.Lefts); i++ {
		if got.Lefts[i] < got.Lefts[i-1]-0.5 {
			t.Errorf("bar %d (%s) starts at %.1f px, before bar %d (%s) at %.1f px", i, got.Labels[i], got.Lefts[i], i-1, got.Labels[i-1], got.Lefts[i-1])
		}
	}
	out := make([]string, len(got.Labels))
	for i, l := range got.Labels {
		out[i] = l[:strings.LastIndex(l, ", ")]
	}
	return out
}

// TestInspectorWaterfall: a run with two tool calls the user asked for, and one that waited for
// approval, opened in the timeline, each show a waterfall with one bar per model call, tool call
// and wait, in time order, labelled as the API's record says (tool, effect class, status; a
// model call's output tokens); the approved run has its two attempts; the trace id is shown;
// choosing a tool bar (a click, or Enter) shows its arguments and result. The usage charts show
// the tokens of each run and the context's make-up as the API answers them. No accessibility
// violation; at 1280 and 390 px nothing is wider than the screen and no text wider than its box.
func TestInspectorWaterfall(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	file := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(file, []byte("providers:\n  offline: {kind: scripted}\nagents:\n  default:\n    provider: offline\n  careful:\n    provider: offline\n    approval: {write_file: always}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	srv := startServer(t, data, "--agents", file)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "waterfall"}, 201).json(t)["id"].(string)
	finish := func(id string) map[string]any {
		t.Helper()
		var run map[string]any
		poll.Eventually(t, "run "+id+" to finish", func() bool {
			run = must(t, srv.url, key, "GET", "/v1/runs/"+id, nil, 200).json(t)
			return run["status"] == "succeeded"
		})
		return run
	}
	first := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "New task: ship the notes\n" +
		`/tool write_file {"path":"notes.txt","content":"one"}` + "\n" + `/tool write_file {"path":"more.txt","content":"two"}`}, 202).json(t)["id"].(string)
	run1 := finish(first)
	second := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "continue the task", "agent": "careful"}, 202).json(t)["id"].(string)
	poll.Eventually(t, "the approval", func() bool {
		return must(t, srv.url, key, "GET", "/v1/runs/"+second, nil, 200).json(t)["status"] == "waiting_approval"
	})
	pending := must(t, srv.url, key, "GET", "/v1/runs/"+second, nil, 200).json(t)["pending_action"].(map[string]any)
	must(t, srv.url, key, "POST", "/v1/runs/"+second+"/approve", map[string]any{"action_id": pending["id"], "decision": "approve"}, 200)
	run2 := finish(second)

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the first run", chromedp.Navigate(srv.url+"/ui/#/s/"+sid+"/"+first))
	p.until("its waterfall", `!!document.querySelector('#run-`+first+` .waterfall .wf-row') && !!document.querySelector('#usage-runs li[data-run]') && !!document.querySelector('#usage-context .cb-bar')`)
	want1 := wantBars(t, srv, key, sid, first)
	if got := barsOf(t, p, first); strings.Join(got, "\n") != strings.Join(want1, "\n") {
		t.Fatalf("the first run's waterfall has the bars\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want1, "\n"))
	}
	if n := strings.Count(strings.Join(want1, "\n"), "write_file, reconcilable, succeeded"); n != 3 { // PLAN.md and the two asked for
		t.Fatalf("the first run has %d write_file calls: %v", n, want1)
	}
	// Time to first token: a mark on each model call whose stored deltas say when its text came.
	steps := map[int]bool{}
	for _, e := range storedEvents(t, srv, key, first) {
		var d struct {
			Step int
			Text string
			At   string
		}
		if e.Type == "model.delta" && json.Unmarshal(e.Data, &d) == nil && d.Text != "" && d.At != "" {
			steps[d.Step] = true
		}
	}
	if got := p.eval(`String(document.querySelectorAll('#run-` + first + ` .wf-row.model .wf-ttft').length)`); got != fmt.Sprint(len(steps)) || len(steps) == 0 {
		t.Fatalf("the first run's waterfall marks the first token on %s model calls; its stored deltas tell it for %d", got, len(steps))
	}
	head := p.eval(`document.querySelector('#run-` + first + ` .wf-head').textContent`)
	u := run1["usage"].(map[string]any)
	for _, w := range []string{fmt.Sprintf("usage %v in / %v out tokens", u["input_tokens"], u["output_tokens"]), run1["trace_id"].(string), "1 attempt"} {
		if !strings.Contains(head, w) {
			t.Errorf("the waterfall's head says %q, without %q", head, w)
		}
	}

	// A tool bar, clicked: its arguments and result.
	var notes map[string]any
	for _, a := range must(t, srv.url, key, "GET", "/v1/runs/"+first+"/actions", nil, 200).json(t)["items"].([]any) {
		if a := a.(map[string]any); strings.Contains(toJSON(a["args"]), "notes.txt") {
			notes = a
		}
	}
	p.do("click the notes.txt bar", chromedp.Click(chromedp.CSS(`#run-`+first+` .wf-row[data-action="`+notes["id"].(string)+`"]`)))
	detail := `document.querySelector('#run-` + first + ` .wf-detail').textContent`
	p.until("its details", detail+`.includes('notes.txt') && `+detail+`.includes(`+jsString(notes["result"].(string))+`)`)
	if got := p.eval(detail); !strings.Contains(got, "Arguments") || !strings.Contains(got, `"content": "one"`) || !strings.Contains(got, "Events (2)") || !strings.Contains(got, "tool.started") {
		t.Fatalf("the notes.txt bar's details say %q", got)
	}
	p.check("waterfall")

	// The second run: its wait for approval, and its two attempts; Enter chooses a bar.
	p.do("open the second run", chromedp.Click(`//details[@id="run-`+second+`"]/summary`))
	p.until("its waterfall", `!!document.querySelector('#run-`+second+` .waterfall .wf-row')`)
	want2 := wantBars(t, srv, key, sid, second)
	if got := barsOf(t, p, second); strings.Join(got, "\n") != strings.Join(want2, "\n") || !strings.Contains(strings.Join(got, "\n"), "waiting for approval of write_file, approved") {
		t.Fatalf("the second run's waterfall has the bars\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want2, "\n"))
	}
	if got, want := p.eval(`String(document.querySelectorAll('#run-`+second+` .wf-attempt').length)`), fmt.Sprint(run2["attempt"]); got != want || want != "2" {
		t.Fatalf("the second run's waterfall has %s attempts, the run %s", got, want)
	}
	if got := p.eval(`document.querySelector('#run-` + second + ` .wf-attempt[data-attempt="2"] .wf-attempt-head').textContent`); !strings.Contains(got, "resumed after the decision") {
		t.Fatalf("the second attempt is headed %q", got)
	}
	p.do("Enter on the wait", chromedp.Focus(chromedp.CSS(`#run-`+second+` .wf-row.wait`)), chromedp.KeyEvent("\r"))
	p.until("the wait's details", `document.querySelector('#run-`+second+` .wf-detail').textContent.includes('run.waiting_approval') && document.querySelector('#run-`+second+` .wf-row.wait').getAttribute('aria-pressed') === 'true'`)

	// The usage charts: the runs' tokens and the context's parts as the API answers them.
	for _, r := range must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)["items"].([]any) {
		r := r.(map[string]any)
		u := r["usage"].(map[string]any)
		want := fmt.Sprintf("Run %s: %v input and %v output tokens", r["id"], u["input_tokens"], u["output_tokens"])
		if got := p.eval(`document.querySelector('#usage-runs li[data-run="` + r["id"].(string) + `"]')?.getAttribute('aria-label') ?? ''`); got != want {
			t.Errorf("the usage chart says %q, want %q", got, want)
		}
	}
	c := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/context", nil, 200).json(t)
	var parts []string
	for _, part := range c["parts"].([]any) {
		part := part.(map[string]any)
		if part["tokens"].(float64) > 0 {
			parts = append(parts, fmt.Sprintf("%v=%v", part["name"], part["tokens"]))
		}
	}
	if got := p.eval(`[...document.querySelectorAll('#usage-context .cb-seg')].map((s) => s.dataset.part + '=' + s.dataset.tokens).join(' ')`); got != strings.Join(parts, " ") || len(parts) < 3 {
		t.Errorf("the context bar has the parts %q, the API %q", got, strings.Join(parts, " "))
	}
	if got := p.eval(`document.querySelector('#usage-context figcaption').textContent`); !strings.Contains(got, fmt.Sprintf("%v of %v tokens", c["tokens"], c["budget"])) {
		t.Errorf("the context bar says %q; the API %v of %v tokens", got, c["tokens"], c["budget"])
	}
	p.check("usage")
	for _, w := range []struct {
		name          string
		width, height int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		p.do(w.name, chromedp.EmulateViewport(w.width, w.height))
		if bad := p.eval(waterfallOverflowJS); bad != "" {
			p.shot("waterfall-" + w.name)
			t.Fatalf("at %d px:\n%s", w.width, bad)
		}
		p.check("waterfall-" + w.name)
	}
}

// TestInspectorWaterfallTakeover: a run whose unsafe call a crash cut off, taken over by the
// restarted server and run again by the user's decision, shows its attempts: the first (its cut
// off call), the takeover after the crash, and the one resumed after the decision.
func TestInspectorWaterfallTakeover(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	data := t.TempDir()
	addr := fixedAddr(t)
	env := []string{"CARRYON_TEST_TOOLS=1"}
	srv := startServerEnv(t, data, append(env, "CARRYON_FAILPOINT="+failpoint.ActionStarted+"@3"), "--addr", addr, "--lease-ttl", "1s")
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "crash"}, 201).json(t)["id"].(string)
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "New task: log the release\n/tool test_append {\"text\":\"released\"}"}, 202).json(t)["id"].(string)
	waitExit(t, srv)
	srv = startServerEnv(t, data, env, "--addr", addr, "--lease-ttl", "1s")
	var run map[string]any
	poll.Eventually(t, "the decision", func() bool {
		run = must(t, srv.url, key, "GET", "/v1/runs/"+runID, nil, 200).json(t)
		return run["status"] == "waiting_approval"
	})
	pending := run["pending_action"].(map[string]any)
	must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/approve", map[string]any{"action_id": pending["id"], "decision": "rerun"}, 200)
	poll.Eventually(t, "the run to finish", func() bool {
		run = must(t, srv.url, key, "GET", "/v1/runs/"+runID, nil, 200).json(t)
		return run["status"] == "succeeded"
	})

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the run", chromedp.Navigate(srv.url+"/ui/#/s/"+sid+"/"+runID))
	p.until("its waterfall", `!!document.querySelector('#run-`+runID+` .waterfall .wf-row')`)
	heads := p.eval(`[...document.querySelectorAll('#run-` + runID + ` .wf-attempt')].map((a) => a.className + ': ' + a.querySelector('.wf-attempt-head').textContent).join('\n')`)
	if got, want := strings.Count(heads, "\n")+1, int(run["attempt"].(float64)); got != want || want < 2 {
		t.Fatalf("the waterfall has %d attempts, the run %d:\n%s", got, want, heads)
	}
	if got, want := strings.Count(heads, "wf-attempt takeover: "), int(run["takeovers"].(float64)); got != want || want != 1 || !strings.Contains(heads, "Attempt 2 · taken over after a crash") {
		t.Fatalf("the waterfall shows %d takeovers, the run %d:\n%s", got, want, heads)
	}
	cut := p.eval(`[...document.querySelectorAll('#run-` + runID + ` .wf-attempt[data-attempt="1"] .wf-row.tool')].map((b) => b.getAttribute('aria-label')).join('\n')`)
	if !strings.Contains(cut, "test_append, unsafe, cut off") {
		t.Fatalf("the first attempt's tool bars are\n%s\nwithout the call the crash cut off", cut)
	}
	if got := p.eval(`[...document.querySelectorAll('#run-` + runID + ` .wf-attempt[data-attempt="2"] .wf-row.wait')].map((b) => b.getAttribute('aria-label')).join('\n')`); !strings.HasPrefix(got, "waiting for a decision on test_append (cut off by a crash), run again, ") {
		t.Fatalf("the takeover's wait is %q", got)
	}
	if got := p.eval(`[...document.querySelectorAll('#run-` + runID + ` .wf-row.tool')].filter((b) => b.getAttribute('aria-label').startsWith('test_append, unsafe, succeeded')).length + ''`); got != "1" {
		t.Fatalf("the waterfall shows the call run again %s times", got)
	}
	p.check("waterfall-takeover")
}
