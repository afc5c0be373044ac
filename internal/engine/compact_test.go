package engine_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model"
)

// compactThreshold is the automatic compaction's threshold of these tests, far under the
// builder's budget (16000), so only the compaction keeps the contexts small.
const compactThreshold = 600

// isSummaryRequest says whether a request is the summarizer's.
func isSummaryRequest(v view) bool { return strings.HasPrefix(v.System, contextbuild.SummarizePrompt) }

// sentTokens counts a request as the builder counts a context: the system message and every
// message with their framing. The builder counts the system message's parts one by one and the
// request joins them with blank lines, so the two may differ by a token or two at each join:
// slack is what that can add up to.
func sentTokens(v view, modelName string) (n, slack int) {
	c := contextbuild.CounterFor(modelName)
	n = c.Count(v.System) + 4
	for _, m := range v.Msgs {
		n += c.Count(m.Text) + 4
	}
	return n, 2 * (strings.Count(v.System, "\n\n") + 1)
}

// turnText is a user message of about 60 tokens, different each turn.
func turnText(i int) string {
	return fmt.Sprintf("Turn %d: please look at module %d, list what it imports, say which functions are slow, "+
		"and note what the tests of module %d cover and what they leave out, with file names and line numbers.", i, i, i)
}

// TestAutoCompactionKeepsContextsUnderThreshold: 30 turns on one session whose history grows far
// past the threshold. Every model call (of the runs, not the summarizer's) is sent at most the
// threshold's tokens, the session is compacted several times (each a stored compaction under its
// step's request id), and the calls after a compaction carry its summary.
func TestAutoCompactionKeepsContextsUnderThreshold(t *testing.T) {
	t.Parallel()
	w := openaiWire
	srv := newFakeLLM(t, w.path, func(n int, body []byte, rw http.ResponseWriter) {
		if v := w.read(t, body); isSummaryRequest(v) {
			w.text(rw, fmt.Sprintf("- summary at request %d: the user went through modules one by one", n))
			return
		}
		w.text(rw, "Module looked at: ", "it imports three packages ", "and its tests cover the parser.")
	})
	f := newFixtureConfig(t, model.WithRetry(w.provider(srv.URL), retryFast), engine.Config{Model: w.model, DeltaEvery: time.Nanosecond, CompactThreshold: compactThreshold})
	s, err := f.sess.Create(f.alice, carryon.NewSession{Title: "long"})
	if err != nil {
		t.Fatal(err)
	}
	var runIDs []string
	for i := 1; i <= 30; i++ {
		run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: turnText(i)})
		if err != nil {
			t.Fatal(err)
		}
		if run = f.wait(t, run.ID); run.Status != carryon.RunSucceeded {
			t.Fatalf("turn %d: %s %s", i, run.Status, run.Error)
		}
		runIDs = append(runIDs, run.ID)
	}
	history := 0
	for _, m := range f.messages(t, s.ID) {
		if m.Kind != carryon.KindSummary {
			history += contextbuild.CounterFor(w.model).Count(m.Content) + 4
		}
	}
	if history < 3*compactThreshold {
		t.Fatalf("the history holds %d tokens: too few to need compactions under %d", history, compactThreshold)
	}
	calls, withSummary, summaries := 0, 0, 0
	for i := range srv.count() {
		v := w.read(t, srv.body(i))
		if isSummaryRequest(v) {
			summaries++
			continue
		}
		calls++
		if n, slack := sentTokens(v, w.model); n > compactThreshold+slack {
			t.Errorf("call %d was sent %d tokens, over the threshold %d", i+1, n, compactThreshold)
		}
		if strings.Contains(v.System, contextbuild.HeadingSummary) {
			withSummary++
		}
	}
	if calls != 30 {
		t.Errorf("%d model calls for 30 turns", calls)
	}
	page, err := f.sess.ListCompactions(f.alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) < 2 || len(page.Items) != summaries {
		t.Fatalf("%d compactions stored, %d summaries asked for", len(page.Items), summaries)
	}
	for _, c := range page.Items {
		ok := false
		for _, id := range runIDs {
			ok = ok || c.RequestID == engine.CompactRequestID(id, 1)
		}
		if !ok || c.Model != w.model || c.TokensAfter <= 0 || c.TokensAfter >= c.TokensBefore {
			t.Errorf("compaction %+v: want a run's step-1 request id, the model, and fewer tokens after than before", c)
		}
	}
	if withSummary == 0 || withSummary >= calls {
		t.Errorf("%d of %d calls carried a summary", withSummary, calls)
	}
}

// TestAutoCompactionFailureLeavesHistory: a summarizer that fails leaves the history as it was
// (no summary stored) and the run goes on, sending what it would have sent without compaction; the
// engine's logger (not the process's default) is told why.
func TestAutoCompactionFailureLeavesHistory(t *testing.T) {
	t.Parallel()
	w := openaiWire
	srv := newFakeLLM(t, w.path, func(n int, body []byte, rw http.ResponseWriter) {
		if isSummaryRequest(w.read(t, body)) {
			w.fail(rw, http.StatusBadRequest, nil)
			return
		}
		w.text(rw, "Done.")
	})
	var logs lockedLog
	f := newFixtureConfig(t, w.provider(srv.URL), engine.Config{Model: w.model, DeltaEvery: time.Nanosecond, CompactThreshold: 300,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	s, err := f.sess.Create(f.alice, carryon.NewSession{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []carryon.NewMessage
	for i := 1; i <= 10; i++ {
		msgs = append(msgs, carryon.NewMessage{Role: carryon.RoleUser, Content: turnText(i)}, carryon.NewMessage{Role: carryon.RoleAssistant, Content: "Noted."})
	}
	if _, err := f.sess.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "And now?"})
	if err != nil {
		t.Fatal(err)
	}
	if run = f.wait(t, run.ID); run.Status != carryon.RunSucceeded || run.Reply != "Done." {
		t.Fatalf("run: %s %q %s", run.Status, run.Reply, run.Error)
	}
	if got := logs.String(); !strings.Contains(got, "the automatic compaction did not compact") || !strings.Contains(got, "run="+run.ID) {
		t.Errorf("the engine's logger got %q", got)
	}
	for _, m := range f.messages(t, s.ID) {
		if m.Kind == carryon.KindSummary {
			t.Errorf("a summary was stored: %+v", m)
		}
	}
	if srv.count() != 2 {
		t.Fatalf("%d requests, want the summarizer's and the run's", srv.count())
	}
	if v := w.read(t, srv.body(1)); len(v.Msgs) != 21 || strings.Contains(v.System, contextbuild.HeadingSummary) {
		t.Errorf("the run sent %d messages (want all 21), system:\n%s", len(v.Msgs), v.System)
	}
}

// TestAutoCompactionOncePerStep: a server stops during the model call that follows a step's
// compaction, whose summary is so long that the context is still over the threshold. The next
// runner resumes the step: it finds the step's compaction done (its request id used) and does
// not ask the summarizer again, so the session holds one compaction.
func TestAutoCompactionOncePerStep(t *testing.T) {
	t.Parallel()
	w := openaiWire
	calling, release := make(chan struct{}), make(chan struct{})
	srv := newFakeLLM(t, w.path, func(n int, body []byte, rw http.ResponseWriter) {
		if isSummaryRequest(w.read(t, body)) {
			w.text(rw, strings.Repeat("- the user asked about many modules and their tests in detail\n", 40))
			return
		}
		if n == 2 {
			close(calling)
			<-release // the runner gave up on this call when its server stopped
			return
		}
		w.text(rw, "Done.")
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	f := newFixtureConfig(t, model.WithRetry(w.provider(srv.URL), retryFast), engine.Config{Model: w.model, DeltaEvery: time.Nanosecond, CompactThreshold: 500})
	s, err := f.sess.Create(f.alice, carryon.NewSession{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []carryon.NewMessage
	for i := 1; i <= 10; i++ {
		msgs = append(msgs, carryon.NewMessage{Role: carryon.RoleUser, Content: turnText(i)}, carryon.NewMessage{Role: carryon.RoleAssistant, Content: "Noted."})
	}
	if _, err := f.sess.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "And now?"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-calling:
	case <-time.After(20 * time.Second):
		t.Fatal("the model was never called after the compaction")
	}
	f.stop()
	close(release)
	page, err := f.sess.ListCompactions(f.alice, s.ID)
	if err != nil || len(page.Items) != 1 || page.Items[0].RequestID != engine.CompactRequestID(run.ID, 1) {
		t.Fatalf("after the stop: %v %+v", err, page)
	}
	if n, _ := sentTokens(w.read(t, srv.body(1)), w.model); n <= 500 {
		t.Fatalf("the call after the compaction was sent %d tokens: the test needs it over the threshold", n)
	}
	// While no runner holds the run, a client adds to the session: the resumed step has more to
	// compact, and still must not compact again.
	if _, err := f.sess.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: msgs[:6]}); err != nil {
		t.Fatal(err)
	}

	f.startRuns()
	if run = f.wait(t, run.ID); run.Status != carryon.RunSucceeded || run.Reply != "Done." || run.Attempt != 2 {
		t.Fatalf("resumed run: %s %q %s attempt %d", run.Status, run.Reply, run.Error, run.Attempt)
	}
	summaries := 0
	for i := range srv.count() {
		if isSummaryRequest(w.read(t, srv.body(i))) {
			summaries++
		}
	}
	if summaries != 1 || srv.count() != 3 || len(w.read(t, srv.body(2)).Msgs) <= len(w.read(t, srv.body(1)).Msgs) {
		t.Errorf("%d requests, %d of them the summarizer's: want 3 and 1", srv.count(), summaries)
	}
	if page, err = f.sess.ListCompactions(f.alice, s.ID); err != nil || len(page.Items) != 1 {
		t.Errorf("compactions after the resume: %v %d", err, len(page.Items))
	}
}

// historyOf is a session's history (with a context preview) as JSON, to be compared byte for byte.
func historyOf(t *testing.T, f *fixture, sessionID string) string {
	t.Helper()
	b, err := json.Marshal(f.messages(t, sessionID))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// longSession makes a session of 20 messages, far over a threshold of a few hundred tokens.
func longSession(t *testing.T, f *fixture) string {
	t.Helper()
	s, err := f.sess.Create(f.alice, carryon.NewSession{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []carryon.NewMessage
	for i := 1; i <= 10; i++ {
		msgs = append(msgs, carryon.NewMessage{Role: carryon.RoleUser, Content: turnText(i)}, carryon.NewMessage{Role: carryon.RoleAssistant, Content: "Noted."})
	}
	if _, err := f.sess.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// TestRunCompactThresholdOverridesProfile: a run's own threshold (NewRun.CompactThreshold, the
// OpenAI door's context_management) compacts a session whose profile has none, and the
// summarizer's tokens are counted in the run's usage beside the run's own call.
func TestRunCompactThresholdOverridesProfile(t *testing.T) {
	t.Parallel()
	w := openaiWire
	srv := newFakeLLM(t, w.path, func(n int, body []byte, rw http.ResponseWriter) {
		if isSummaryRequest(w.read(t, body)) {
			w.text(rw, "- the user ", "went through ten modules")
			return
		}
		w.text(rw, "Done.")
	})
	f := newFixtureConfig(t, w.provider(srv.URL), engine.Config{Model: w.model, DeltaEvery: time.Nanosecond})
	id := longSession(t, f)
	if _, err := f.runs.Start(f.alice, id, carryon.NewRun{Message: "x", CompactThreshold: -1}); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("a negative threshold: %v", err)
	}
	run, err := f.runs.Start(f.alice, id, carryon.NewRun{Message: "And now?", CompactThreshold: 300})
	if err != nil {
		t.Fatal(err)
	}
	if run.CompactThreshold != 300 {
		t.Fatalf("the run answered threshold %d", run.CompactThreshold)
	}
	if run = f.wait(t, run.ID); run.Status != carryon.RunSucceeded || run.CompactThreshold != 300 {
		t.Fatalf("run: %s %s, threshold %d", run.Status, run.Error, run.CompactThreshold)
	}
	page, err := f.sess.ListCompactions(f.alice, id)
	if err != nil || len(page.Items) != 1 || page.Items[0].RequestID != engine.CompactRequestID(run.ID, 1) {
		t.Fatalf("compactions: %v %+v", err, page)
	}
	// The fake model reports 10 input tokens and one output token per piece: the summary's 10+2
	// and the answer's 10+1.
	if run.Usage.InputTokens != 20 || run.Usage.OutputTokens != 3 {
		t.Errorf("usage %+v: want the summarizer's call counted with the run's", run.Usage)
	}
	if v := w.read(t, srv.body(1)); !strings.Contains(v.System, contextbuild.HeadingSummary) {
		t.Errorf("the run's call carries no summary:\n%s", v.System)
	}
}

// TestAutoCompactionTimeoutLeavesHistory: a summarizer that does not answer within the builder's
// SummaryTimeout leaves the history byte-identical (no summary, no compaction) and the run goes
// on, sending the whole history.
func TestAutoCompactionTimeoutLeavesHistory(t *testing.T) {
	t.Parallel()
	w := openaiWire
	release := make(chan struct{})
	srv := newFakeLLM(t, w.path, func(n int, body []byte, rw http.ResponseWriter) {
		if isSummaryRequest(w.read(t, body)) {
			<-release // never answers while the run waits
			return
		}
		w.text(rw, "Done.")
	})
	t.Cleanup(func() { close(release) })
	f := newFixtureBuilder(t, w.provider(srv.URL), engine.Config{Model: w.model, DeltaEvery: time.Nanosecond, CompactThreshold: 300},
		contextbuild.Config{SummaryTimeout: 300 * time.Millisecond})
	id := longSession(t, f)
	before := historyOf(t, f, id)
	preview, err := f.eng.Builder().Preview(f.alice, id, w.model)
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.runs.Start(f.alice, id, carryon.NewRun{Message: "And now?"})
	if err != nil {
		t.Fatal(err)
	}
	if run = f.wait(t, run.ID); run.Status != carryon.RunSucceeded || run.Reply != "Done." {
		t.Fatalf("run: %s %q %s", run.Status, run.Reply, run.Error)
	}
	msgs := f.messages(t, id)
	if len(msgs) != 22 {
		t.Fatalf("%d messages: want the 20 and the run's two", len(msgs))
	}
	b, _ := json.Marshal(msgs[:20])
	if string(b) != before {
		t.Errorf("the history changed:\n%s\nwas\n%s", b, before)
	}
	if page, err := f.sess.ListCompactions(f.alice, id); err != nil || len(page.Items) != 0 {
		t.Errorf("compactions: %v %+v", err, page)
	}
	v := w.read(t, srv.body(1))
	if len(v.Msgs) != 21 || strings.Contains(v.System, contextbuild.HeadingSummary) {
		t.Fatalf("the run sent %d messages (want all 21), system:\n%s", len(v.Msgs), v.System)
	}
	for i, m := range preview.Messages {
		if v.Msgs[i].Text != m.Content {
			t.Errorf("message %d sent %q, the context before the run had %q", i, v.Msgs[i].Text, m.Content)
		}
	}
}

// lockedLog is a log's text, written by the runners' goroutines and read by the test.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
