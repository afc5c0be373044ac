package runs_test

import (
	"context"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/store"
)

func (f *fixture) setSessionBudget(t *testing.T, owner, sessionID string, b *carryon.Budget) {
	t.Helper()
	err := f.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return tx.PutSessionBudget(ctx, owner, sessionID, b, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) sessionSpend(t *testing.T, owner, sessionID string) carryon.Spend {
	t.Helper()
	var s carryon.Spend
	err := f.st.Read(context.Background(), func(tx store.Tx) error {
		ms, err := tx.SessionSpend(context.Background(), owner, sessionID)
		for _, m := range ms {
			s = s.Add(m.Spend())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// A session budget spent at a step boundary pauses the run in waiting_approval with what was spent
// and the limit; approving without raising it pauses it again at once; raising it and approving
// continues the same run to its answer. What the session spent is what the run used, exactly.
func TestBudgetPausesApprovesAndContinues(t *testing.T) {
	f := newFixture(t, nil)
	sess, err := f.sess.Create(f.alice, carryon.NewSession{Title: "budget"})
	if err != nil {
		t.Fatal(err)
	}
	f.setSessionBudget(t, "usr_alice", sess.ID, &carryon.Budget{Tokens: ptr(int64(1))})
	run, err := f.runs.Start(f.alice, sess.ID, carryon.NewRun{Message: "Write a haiku about the sea"})
	if err != nil {
		t.Fatal(err)
	}
	got := f.wait(t, f.alice, run.ID)
	if got.Status != carryon.RunWaitingApproval || got.BudgetStop == nil {
		t.Fatalf("run = %s (%s) with budget stop %+v, want waiting_approval for the budget", got.Status, got.Error, got.BudgetStop)
	}
	stop := got.BudgetStop
	if stop.Reason != carryon.ReasonBudgetExceeded || stop.Scope != carryon.BudgetScopeSession || stop.Spent.Tokens < 1 || *stop.Limit.Tokens != 1 || stop.OnExceed != carryon.BudgetPause {
		t.Fatalf("budget stop = %+v", stop)
	}
	if got.Step != 1 || got.PendingAction != nil || !strings.Contains(got.Error, "budget exceeded") {
		t.Fatalf("paused run: step %d, pending action %+v, error %q; want step 1, none, budget exceeded", got.Step, got.PendingAction, got.Error)
	}
	firstAttempt := got.Attempt

	// Approving without raising it: paused again at once, no model call made.
	if _, err := f.runs.Approve(f.alice, run.ID, carryon.Approval{Decision: carryon.DecisionApprove}); err != nil {
		t.Fatal(err)
	}
	again := f.wait(t, f.alice, run.ID)
	if again.Status != carryon.RunWaitingApproval || again.BudgetStop == nil || again.Step != 1 || again.Attempt <= firstAttempt {
		t.Fatalf("after an approval without a raise: %s step %d attempt %d stop %+v", again.Status, again.Step, again.Attempt, again.BudgetStop)
	}
	if again.BudgetStop.Spent != stop.Spent {
		t.Fatalf("spent moved from %+v to %+v without a model call", stop.Spent, again.BudgetStop.Spent)
	}
	// Wrong approvals change nothing.
	_, err = f.runs.Approve(f.alice, run.ID, carryon.Approval{Decision: carryon.DecisionApprove, ActionID: "act_nope"})
	wantCode(t, err, carryon.EINVALID)
	_, err = f.runs.Approve(f.bob, run.ID, carryon.Approval{Decision: carryon.DecisionApprove})
	wantCode(t, err, carryon.ENOTFOUND)

	f.setSessionBudget(t, "usr_alice", sess.ID, &carryon.Budget{Tokens: ptr(int64(1_000_000))})
	if _, err := f.runs.Approve(f.alice, run.ID, carryon.Approval{Decision: carryon.DecisionApprove}); err != nil {
		t.Fatal(err)
	}
	done := f.wait(t, f.alice, run.ID)
	if done.Status != carryon.RunSucceeded || done.Reply == "" || done.BudgetStop != nil {
		t.Fatalf("after a raise and an approval: %s (%s), reply %q, stop %+v", done.Status, done.Error, done.Reply, done.BudgetStop)
	}
	spent := f.sessionSpend(t, "usr_alice", sess.ID)
	if used := int64(done.Usage.InputTokens + done.Usage.OutputTokens); spent.Tokens != used {
		t.Fatalf("session spent %d tokens, the run used %d", spent.Tokens, used)
	}
}

// on_exceed fail ends the run failed with a clear error; a user's day budget in money stops runs
// of every session of the user, priced with the prices.
func TestBudgetFailAndUserMoney(t *testing.T) {
	price := carryon.Price{Input: 1000, Output: 2000} // USD per million tokens: 1 and 2 milli-dollars a token
	f := newFixtureWith(t, nil, runs.Config{Prices: func(m string) (carryon.Price, bool) { return price, m == "scripted" }})
	sess, err := f.sess.Create(f.alice, carryon.NewSession{Title: "fail"})
	if err != nil {
		t.Fatal(err)
	}
	f.setSessionBudget(t, "usr_alice", sess.ID, &carryon.Budget{Tokens: ptr(int64(1)), OnExceed: carryon.BudgetFail})
	run, err := f.runs.Start(f.alice, sess.ID, carryon.NewRun{Message: "Write a haiku about the sea"})
	if err != nil {
		t.Fatal(err)
	}
	got := f.wait(t, f.alice, run.ID)
	if got.Status != carryon.RunFailed || got.BudgetStop == nil || !strings.Contains(got.Error, "budget exceeded: the session's budget (1 tokens)") {
		t.Fatalf("run = %s (%q), stop %+v; want failed for the session's budget", got.Status, got.Error, got.BudgetStop)
	}
	spent := f.sessionSpend(t, "usr_alice", sess.ID)
	if spent.Cost == 0 || spent.USD != spent.Cost.USD() {
		t.Fatalf("spend in money = %+v, want priced", spent)
	}

	// The user's day budget in USD, below what is spent already: a run of another session stops
	// before its first model call.
	err = f.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return tx.PutUserBudget(ctx, "usr_alice", carryon.UserBudget{Day: &carryon.Budget{USD: ptr(spent.USD / 2)}}, got.UpdatedAt)
	})
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.sess.Create(f.alice, carryon.NewSession{Title: "other"})
	if err != nil {
		t.Fatal(err)
	}
	run2, err := f.runs.Start(f.alice, other.ID, carryon.NewRun{Message: "Write a haiku about the sea"})
	if err != nil {
		t.Fatal(err)
	}
	got2 := f.wait(t, f.alice, run2.ID)
	if got2.Status != carryon.RunWaitingApproval || got2.BudgetStop == nil || got2.BudgetStop.Scope != carryon.BudgetScopeUserDay || got2.Step != 0 {
		t.Fatalf("run of another session = %s step %d stop %+v; want waiting for the user's day budget before any step", got2.Status, got2.Step, got2.BudgetStop)
	}
	if s := f.sessionSpend(t, "usr_alice", other.ID); s.Tokens != 0 {
		t.Fatalf("the stopped run's session spent %+v, want nothing", s)
	}
	// Bob's runs are not stopped by Alice's budget.
	bs, err := f.sess.Create(f.bob, carryon.NewSession{Title: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	br, err := f.runs.Start(f.bob, bs.ID, carryon.NewRun{Message: "Write a haiku about the sea"})
	if err != nil {
		t.Fatal(err)
	}
	if b := f.wait(t, f.bob, br.ID); b.Status != carryon.RunSucceeded {
		t.Fatalf("bob's run = %s (%s), want succeeded", b.Status, b.Error)
	}
}

// cachingModel is the scripted model reporting half of every prompt as read from its cache.
type cachingModel struct{ scripted.Provider }

func (c *cachingModel) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for ch, err := range c.Provider.Stream(ctx, req) {
			if ch.Usage != nil {
				u := *ch.Usage
				u.CachedTokens = u.InputTokens / 2
				ch.Usage = &u
			}
			if !yield(ch, err) || err != nil {
				return
			}
		}
	}
}

// The cached part of a call's input is counted and priced at the cached price.
func TestBudgetCachedTokens(t *testing.T) {
	price := carryon.Price{Input: 1000, Output: 1000, Cached: 0}
	f := newFixtureWith(t, &cachingModel{}, runs.Config{Prices: func(string) (carryon.Price, bool) { return price, true }})
	sess, err := f.sess.Create(f.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.runs.Start(f.alice, sess.ID, carryon.NewRun{Message: "Write a haiku about the sea"})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.wait(t, f.alice, run.ID); r.Status != carryon.RunSucceeded {
		t.Fatalf("run = %s (%s)", r.Status, r.Error)
	}
	var ms []carryon.ModelSpend
	err = f.st.Read(context.Background(), func(tx store.Tx) (err error) {
		ms, err = tx.SessionSpend(context.Background(), "usr_alice", sess.ID)
		return err
	})
	if err != nil || len(ms) != 1 {
		t.Fatalf("spend = %+v, %v", ms, err)
	}
	m := ms[0]
	if m.CachedTokens == 0 || m.CachedTokens > m.InputTokens {
		t.Fatalf("cached tokens = %d of %d input", m.CachedTokens, m.InputTokens)
	}
	// 1,000 USD per million tokens is a milli-dollar (a million nano-dollars) a token.
	if want := carryon.NanoUSD((m.InputTokens - m.CachedTokens + m.OutputTokens) * 1_000_000); m.Cost != want {
		t.Fatalf("cost = %d nano-dollars, want %d (cached input free)", m.Cost, want)
	}
}

// gateModel is the scripted model whose calls, once closed, wait at the gate until it opens,
// telling entered of each call.
type gateModel struct {
	scripted.Provider
	mu      sync.Mutex
	closed  chan struct{} // nil when open
	entered chan struct{}
	calls   int
}

func (g *gateModel) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	g.mu.Lock()
	g.calls++
	gate := g.closed
	g.mu.Unlock()
	if gate != nil {
		g.entered <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	return g.Provider.Stream(ctx, req)
}

// Near a user budget, a user's second run does not call its model while the first one's call is
// in progress (its hold): it waits, then finds the budget spent by that call and stops, so the
// budget is exceeded by one call, not two. Without the hold both call.
func TestUserBudgetOneCallAtATimeNearTheLimit(t *testing.T) {
	g := &gateModel{entered: make(chan struct{}, 4)}
	f := newFixture(t, g)
	run := func(title string) *carryon.Run {
		t.Helper()
		sess, err := f.sess.Create(f.alice, carryon.NewSession{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		r, err := f.runs.Start(f.alice, sess.ID, carryon.NewRun{Message: "Write a haiku about the sea"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// A run under a large budget: its call is the user's peak.
	f.setUserBudget(t, "usr_alice", 1_000_000)
	if r := f.wait(t, f.alice, run("first").ID); r.Status != carryon.RunSucceeded {
		t.Fatalf("first run = %s (%s)", r.Status, r.Error)
	}
	var spent int64
	err := f.st.Read(context.Background(), func(tx store.Tx) error {
		ms, err := tx.UserSpend(context.Background(), "usr_alice", carryon.Day(time.Now()))
		for _, m := range ms {
			spent += m.InputTokens + m.OutputTokens
		}
		return err
	})
	if err != nil || spent == 0 {
		t.Fatalf("spent %d, %v", spent, err)
	}
	// One token left: the next call crosses the budget.
	f.setUserBudget(t, "usr_alice", spent+1)
	g.mu.Lock()
	g.closed, g.calls = make(chan struct{}), 0
	g.mu.Unlock()
	r1 := run("one")
	<-g.entered
	r2 := run("two")
	select {
	case <-g.entered:
		t.Error("the second run called its model while the first one's call near the budget was in progress")
	case <-time.After(500 * time.Millisecond): // what the second run does meanwhile: wait
	}
	close(g.closed)
	for _, id := range []string{r1.ID, r2.ID} {
		if r := f.wait(t, f.alice, id); r.Status != carryon.RunWaitingApproval || r.BudgetStop == nil {
			t.Fatalf("run %s = %s (%s), stop %+v; want waiting at the user's budget", id, r.Status, r.Error, r.BudgetStop)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls != 1 {
		t.Fatalf("%d model calls near the budget, want 1", g.calls)
	}
}

func (f *fixture) setUserBudget(t *testing.T, owner string, tokens int64) {
	t.Helper()
	err := f.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return tx.PutUserBudget(ctx, owner, carryon.UserBudget{Day: &carryon.Budget{Tokens: &tokens}}, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
}
