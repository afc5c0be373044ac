// Package runs is the run manager: it starts runs on sessions (one active run per session, with
// the reject, enqueue and interrupt policies), hands them to runners that hold a lease on them,
// executes them with the engine, stores their events for streams that resume anywhere, and
// answers for their state and tool journal.
//
// The streams that follow a run in one process share one follower (follow.go), which reads the
// run's new events once for all of them when the run's writers announce a change and on a poll
// that slows down while the run is quiet; each stream resumes at its own cursor.
//
// Every write a runner makes is fenced by the run's attempt: a runner that lost its lease cannot
// write after another took the run over. The engine writes only through this package's Hub.
package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/webhooks"
)

// Config holds the run manager's settings; zero values take the defaults.
type Config struct {
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Instance names this process in leases (default host-pid-random).
	Instance string
	// LeaseTTL is how long a runner's lease lasts without a heartbeat (default 15s).
	LeaseTTL time.Duration
	// MaxReadBytes bounds the bytes of one page of runs (their messages and replies); default
	// carryon.DefaultMaxReadBytes.
	MaxReadBytes int64
	// Heartbeat is how often a runner renews its lease and looks for stop requests (default LeaseTTL/3).
	Heartbeat time.Duration
	// Poll is how often runners look for runnable runs besides being woken (default 1s).
	Poll time.Duration
	// MaxAttempts parks a run as failed when its runner died this many times (default 5).
	MaxAttempts int
	// Workers bounds the runs this process executes at once (default 8).
	Workers int
	// MaxRunsPerUser bounds the runs one user has running at once, across instances (a user's
	// max_concurrent_runs set by an admin overrides it); a queued run past it waits. 0 is no
	// bound.
	MaxRunsPerUser int64
	// ToolOutputTimeout fails a run that waited this long for a client's tool outputs (default
	// carryon.DefaultToolOutputTimeout, 24 h).
	ToolOutputTimeout time.Duration
	// Logger receives the runner's logs.
	Logger *slog.Logger
	// Agents are the agent profiles runs execute; nil runs every run with the engine New was
	// given, as the one profile named default.
	Agents Agents
	// Telemetry traces each attempt (invoke_agent) and counts runs; nil for none.
	Telemetry *telemetry.Telemetry
	// Prices returns a model's price (the agents file's prices), which spend in money counts;
	// nil, or false for a model, counts nothing in money.
	Prices func(model string) (carryon.Price, bool)
}

// Service implements carryon.RunService.
type Service struct {
	st       store.Store
	sess     *sessions.Service
	agents   Agents
	cfg      Config
	log      *slog.Logger
	notify   *broker
	follows  followers
	previews previews
	wake     chan struct{}

	mu      sync.Mutex
	running map[string]*running // runs executing in this process
	slots   chan struct{}
	// work is the context of this process's Work loop while it runs (nil otherwise): a run
	// started here is claimed by it in its start's transaction (claimhere.go).
	work context.Context
	// reserved counts the workers held for runs being started here, claimed in their start.
	reserved int
}

var _ carryon.RunService = (*Service)(nil)

// New returns a run manager that runs every run with eng, or, when cfg.Agents is set, with the
// engine of the run's agent profile (eng may then be nil). Call Work to execute runs in this
// process.
func New(st store.Store, sess *sessions.Service, eng *engine.Engine, cfg Config) *Service {
	if cfg.Agents == nil {
		cfg.Agents = oneAgent{eng}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxReadBytes <= 0 {
		cfg.MaxReadBytes = carryon.DefaultMaxReadBytes
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = 15 * time.Second
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = cfg.LeaseTTL / 3
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 5
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.ToolOutputTimeout <= 0 {
		cfg.ToolOutputTimeout = carryon.DefaultToolOutputTimeout
	}
	if cfg.Instance == "" {
		host, _ := os.Hostname()
		cfg.Instance = host + "-" + strconv.Itoa(os.Getpid()) + "-" + carryon.RandomToken(3)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	remote, _ := store.AsNotifier(st)
	return &Service{
		st: st, sess: sess, agents: cfg.Agents, cfg: cfg, log: cfg.Logger, notify: newBroker(remote),
		follows: followers{m: map[string]*follower{}, buffer: followBuffer},
		wake:    make(chan struct{}, 1), running: map[string]*running{},
		slots: make(chan struct{}, cfg.Workers),
	}
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// Start appends the user message and queues a run, in one transaction under the request id.
func (s *Service) Start(ctx context.Context, sessionID string, in carryon.NewRun) (*carryon.Run, error) {
	if err := carryon.CheckText("message", in.Message); (in.Message == "" && !continuesTool(in.Input)) || err != nil {
		return nil, carryon.Errorf(carryon.EINVALID, "message must be a non-empty UTF-8 string without NUL characters (it may be empty only when input ends with a tool message)")
	}
	policy := in.Multitask
	switch policy {
	case "":
		policy = carryon.MultitaskReject
	case carryon.MultitaskReject, carryon.MultitaskEnqueue, carryon.MultitaskInterrupt:
	default:
		return nil, carryon.Errorf(carryon.EINVALID, "multitask must be reject, enqueue or interrupt, not %q", in.Multitask)
	}
	if err := checkClientTools(in.Tools); err != nil {
		return nil, err
	}
	if in.CompactThreshold < 0 || in.CompactThreshold > carryon.MaxCompactThreshold {
		return nil, carryon.Errorf(carryon.EINVALID, "compact_threshold must be from 1 to %d tokens (or 0 for the profile's), not %d", carryon.MaxCompactThreshold, in.CompactThreshold)
	}
	if len(in.Input) > 0 {
		if policy != carryon.MultitaskReject {
			return nil, carryon.Errorf(carryon.EINVALID, "input messages start a run at once: multitask must be reject, not %q", policy)
		}
		if err := sessions.ValidMessages(in.Input); err != nil {
			return nil, err
		}
	}
	if len(in.Metadata) > 0 && !json.Valid(in.Metadata) {
		return nil, carryon.Errorf(carryon.EINVALID, "metadata must be JSON")
	}
	if err := carryon.CheckJSONText("metadata", in.Metadata); err != nil {
		return nil, err // every door's gate holds this too; the service holds it for embedders
	}
	if in.Agent != "" {
		if _, err := s.agents.Agent(in.Agent); err != nil {
			return nil, err
		}
	}
	key := in.RequestID
	in.RequestID = ""
	var interrupted []string
	here := s.reserve()
	defer here.release()
	start := s.startTx(ctx, sessionID, in, policy, key, &interrupted)
	run, err := sessions.Write(ctx, s.sess, "run.start", sessionID, key, in, func(tx store.Tx, own string, now time.Time) (*carryon.Run, error) {
		r, err := start(tx, own, now)
		if err != nil {
			return nil, err
		}
		return here.claim(ctx, tx, r, now)
	})
	if err != nil {
		return nil, err
	}
	launched := here.launch()
	for _, id := range interrupted {
		s.stopHere(id, &engine.ErrStopped{Reason: "interrupt"})
		s.notify.publish(id) // a runner in another process learns of the stop at once
	}
	s.notify.local(run.ID)
	if !launched {
		s.Wake()
	}
	return run, nil
}

// startTx is the write of a run start: it appends the user message and queues the run (or
// applies the multitask policy), in the transaction of its caller. Chat runs it in the same
// transaction as the session it creates. The ids of the runs it interrupts go to *interrupted
// (nil when the policy cannot interrupt), for the caller to stop once the write committed.
func (s *Service) startTx(ctx context.Context, sessionID string, in carryon.NewRun, policy carryon.Multitask, key string, interrupted *[]string) sessions.WriteFunc[*carryon.Run] {
	return func(tx store.Tx, own string, now time.Time) (*carryon.Run, error) {
		sess, err := sessions.LoadWritable(ctx, tx, own, sessionID, in.ExpectedVersion, nil, now)
		if err != nil {
			return nil, err
		}
		name := in.Agent
		if name == "" {
			name = sess.Agent // the profile the session was bound to
		}
		agent, err := s.agents.Agent(name)
		if err != nil {
			return nil, err
		}
		if err := clashes(agent, in.Tools); err != nil {
			return nil, err
		}
		active, err := tx.ActiveRuns(ctx, own, sessionID)
		if err != nil {
			return nil, err
		}
		if len(active) > 0 {
			switch policy {
			case carryon.MultitaskReject:
				e := carryon.Errorf(carryon.EBUSY, "session %s already has an active run %s (%s); wait for it, cancel it, or start with multitask enqueue or interrupt", sessionID, active[0].ID, active[0].Status)
				if stop := active[0].BudgetStop; stop != nil && active[0].Status == carryon.RunWaitingApproval {
					e = carryon.Errorf(carryon.EBUSY, "session %s already has an active run %s, stopped at a budget (%s): %s; or cancel it, or start with multitask interrupt", sessionID, active[0].ID, stop.Error(), stop.GoOn(active[0].ID))
				}
				e.ActiveRunID, e.RetryAfterSeconds = active[0].ID, 1
				return nil, e
			case carryon.MultitaskInterrupt:
				*interrupted = (*interrupted)[:0]
				for _, a := range active {
					switch {
					case a.Status.Waiting():
						// No runner holds it: it ends now, and the new run starts.
						if err := finishTx(ctx, tx, a, a.Attempt, carryon.RunInterrupted, "", "interrupted by a newer run", now); err != nil {
							return nil, err
						}
					case a.Status == carryon.RunQueued || a.StopRequested != "":
						continue
					default:
						a.StopRequested, a.UpdatedAt = "interrupt", now
						if err := tx.UpdateRun(ctx, a, a.Attempt); err != nil {
							return nil, err
						}
					}
					*interrupted = append(*interrupted, a.ID)
				}
			}
		}
		// Runs of a session go in the order their starts took the session's lock. now is read
		// under that lock (sessions.Write), so it never precedes an active run's created_at, but
		// it may equal it (two starts within one microsecond, or a test's fixed clock): created_at
		// must be strictly after, or the (created_at, id) order would be left to the ids.
		created := now
		for _, a := range active {
			if !a.CreatedAt.Before(created) {
				created = a.CreatedAt.Add(time.Microsecond)
			}
		}
		run := &carryon.Run{
			ID: carryon.NewID("run_"), SessionID: sessionID, OwnerID: own, Status: carryon.RunQueued, Message: in.Message,
			RequestID: key, Model: agent.Model, Multitask: policy, Tools: in.Tools, CreatedAt: created, UpdatedAt: now,
			Agent: agent.Name, AgentDigest: agent.Digest, CompactThreshold: in.CompactThreshold,
			Door: carryon.DoorFromContext(ctx),
		}
		if len(active) == 0 {
			if err := appendTrigger(ctx, tx, sess, run, now, in.Input...); err != nil {
				return nil, err
			}
		} else if err := sessions.Touch(ctx, tx, sess, now); err != nil {
			return nil, err // the message waits for the run's turn; the session still moves on
		}
		if err := tx.InsertRun(ctx, run); err != nil {
			return nil, err
		}
		queued := map[string]any{"trigger_seq": run.TriggerSeq, "multitask": policy}
		if len(in.Metadata) > 0 {
			queued["metadata"] = in.Metadata
		}
		return run, appendEvent(ctx, tx, run.OwnerID, run.ID, carryon.EventRunQueued, queued, now)
	}
}

// GetRun returns one of the caller's runs.
func (s *Service) GetRun(ctx context.Context, runID string) (*carryon.Run, error) {
	var run *carryon.Run
	err := s.read(ctx, func(tx store.Tx, own string) error {
		var err error
		if run, err = tx.GetRun(ctx, own, runID); err != nil {
			return err
		}
		return withRequiredAction(ctx, tx, run)
	})
	return run, err
}

// ListRuns lists a session's runs, newest first.
func (s *Service) ListRuns(ctx context.Context, sessionID string, f carryon.RunFilter) (*carryon.RunPage, error) {
	limit := f.Limit
	if limit == 0 {
		limit = carryon.DefaultPageSize
	}
	if limit < 0 || limit > carryon.MaxMessageWindow {
		return nil, carryon.Errorf(carryon.EINVALID, "limit must be between 1 and %d", carryon.MaxMessageWindow)
	}
	q := store.RunQuery{Limit: limit + 1}
	if f.Cursor != "" {
		t, id, err := sessions.DecodeCursor(f.Cursor)
		if err != nil {
			return nil, err
		}
		q.AfterCreated, q.AfterID = t, id
	}
	page := &carryon.RunPage{Items: []*carryon.Run{}}
	err := s.read(ctx, func(tx store.Tx, own string) error {
		if _, err := tx.GetSession(ctx, own, sessionID); err != nil {
			return err
		}
		// The page stops early at the read budget (a run holds its message and reply);
		// next_cursor goes on from the last run it holds.
		bctx, budget := store.WithReadBudget(ctx, s.cfg.MaxReadBytes)
		items, err := tx.ListRuns(bctx, own, sessionID, q)
		if err != nil {
			return err
		}
		if len(items) > limit || budget.Spent() && len(items) > 0 {
			items = items[:min(len(items), limit)]
			last := items[len(items)-1]
			page.NextCursor = sessions.EncodeCursor(last.CreatedAt, last.ID)
		}
		for _, r := range items {
			if err := withRequiredAction(ctx, tx, r); err != nil {
				return err
			}
		}
		page.Items = items
		return nil
	})
	return page, err
}

// Cancel asks a run to stop. A queued run is cancelled at once; a running one stops at its next
// checkpoint (a model call in progress is abandoned, a tool call in progress finishes first).
// With a request id, a repeat answers the run as the first cancel left it.
func (s *Service) Cancel(ctx context.Context, runID string, opt carryon.RetryOptions) (*carryon.Run, error) {
	var run *carryon.Run
	ended := false
	cancelTx := func(tx store.Tx, own string, now time.Time) error {
		var err error
		ended = false
		if run, err = tx.GetRun(ctx, own, runID); err != nil || run.Status.Terminal() {
			return err
		}
		if run.Status == carryon.RunQueued || run.Status.Waiting() {
			ended = true
			return finishTx(ctx, tx, run, run.Attempt, carryon.RunCancelled, "", "cancelled by the user", now)
		}
		run.StopRequested, run.UpdatedAt = "cancel", now
		return tx.UpdateRun(ctx, run, run.Attempt)
	}
	run, err := sessions.Write(ctx, s.sess, "run.cancel", runID, opt.RequestID, struct{}{}, func(tx store.Tx, own string, now time.Time) (*carryon.Run, error) {
		err := cancelTx(tx, own, now)
		return run, err
	})
	if err != nil {
		return nil, err
	}
	if ended {
		s.cfg.Telemetry.RunEnded(run.Agent, carryon.RunCancelled)
	}
	s.stopHere(runID, &engine.ErrStopped{Reason: "cancel"})
	s.notify.publish(runID) // a runner in another process learns of the stop at once

	s.Wake()
	return run, nil
}

// Actions returns the run's tool journal.
func (s *Service) Actions(ctx context.Context, runID string) ([]*carryon.Action, error) {
	var out []*carryon.Action
	err := s.read(ctx, func(tx store.Tx, own string) error {
		var err error
		out, err = tx.ListActions(ctx, own, runID)
		return err
	})
	if out == nil && err == nil {
		out = []*carryon.Action{}
	}
	return out, err
}

func (s *Service) read(ctx context.Context, fn func(tx store.Tx, owner string) error) error {
	own := carryon.UserIDFromContext(ctx)
	if own == "" {
		return carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
	}
	return s.st.Read(ctx, func(tx store.Tx) error { return fn(tx, own) })
}

// finishTx ends a run (or parks it waiting for an approval) and stores its last event and the
// deliveries of that event to the owner's webhooks in the same transaction, conditionally on the
// attempt prev it was read at. A run that already ended is ECONFLICT: every terminal transition
// happens once. finished_at is set for terminal statuses only.
func finishTx(ctx context.Context, tx store.Tx, run *carryon.Run, prev int, status carryon.RunStatus, reply, errMsg string, now time.Time) error {
	_, err := endTx(ctx, tx, run, prev, status, reply, errMsg, now)
	return err
}

// endTx is finishTx, returning the event it stored.
func endTx(ctx context.Context, tx store.Tx, run *carryon.Run, prev int, status carryon.RunStatus, reply, errMsg string, now time.Time) (*carryon.Event, error) {
	if run.Status.Terminal() {
		return nil, carryon.Errorf(carryon.ECONFLICT, "run %s already ended (%s)", run.ID, run.Status)
	}
	run.Status, run.Reply, run.Error = status, reply, errMsg
	run.UpdatedAt, run.FinishedAt = now, nil
	if status.Terminal() {
		run.FinishedAt = &now
	}
	run.LeaseOwner, run.LeaseExpiresAt = "", nil
	if err := tx.UpdateRun(ctx, run, prev); err != nil {
		return nil, err
	}
	typ := carryon.EventRunFinished
	data := map[string]any{"status": status, "reply": reply, "error": errMsg, "usage": run.Usage, "steps": run.Step}
	switch status {
	case carryon.RunFailed:
		typ = carryon.EventRunFailed
		if run.BudgetStop != nil {
			data["reason"], data["budget"] = carryon.ReasonBudgetExceeded, run.BudgetStop
		}
	case carryon.RunWaitingApproval:
		typ = carryon.EventRunWaiting
		if run.BudgetStop != nil {
			data["reason"], data["budget"] = carryon.ReasonBudgetExceeded, run.BudgetStop
			break
		}
		// The action that waits, with the arguments it proposes, for whoever decides.
		a, err := pendingAction(ctx, tx, run)
		if err != nil {
			return nil, err
		}
		if a != nil {
			data["action"] = a
		}
	case carryon.RunRequiresAction:
		typ = carryon.EventRunRequiresAction
		ra, err := requiredAction(ctx, tx, run)
		if err != nil {
			return nil, err
		}
		data["required_action"] = ra
	}
	e := &carryon.Event{RunID: run.ID, Type: typ, Data: mustJSON(data), CreatedAt: now}
	if err := tx.AppendEvent(ctx, run.OwnerID, e); err != nil {
		return nil, fmt.Errorf("store event %s: %w", typ, err)
	}
	// The webhooks' outbox rows, in this transaction: a crash loses none and invents none.
	if we, ok := webhooks.RunEvent(run, e.Seq, now); ok {
		if _, err := tx.EnqueueWebhookEvent(ctx, we); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func appendEvent(ctx context.Context, tx store.Tx, owner, runID string, typ carryon.EventType, data any, now time.Time) error {
	e := &carryon.Event{RunID: runID, Type: typ, Data: mustJSON(data), CreatedAt: now}
	if err := tx.AppendEvent(ctx, owner, e); err != nil {
		return fmt.Errorf("store event %s: %w", typ, err)
	}
	return nil
}

// continuesTool says whether a run's input ends with a tool message: such a run may start
// without a message of its own, and continues the history after that tool output.
func continuesTool(input []carryon.NewMessage) bool {
	return len(input) > 0 && input[len(input)-1].Role == carryon.RoleTool
}

// appendTrigger appends the run's user message to the session, after the input messages before
// it (NewRun.Input), and records its seq. A run without a message (one that continues its input
// after a tool output) appends the input only; its trigger is the input's last message.
func appendTrigger(ctx context.Context, tx store.Tx, sess *carryon.Session, run *carryon.Run, now time.Time, before ...carryon.NewMessage) error {
	msgs := append([]carryon.NewMessage{}, before...)
	if run.Message != "" || len(msgs) == 0 {
		msgs = append(msgs, carryon.NewMessage{Role: carryon.RoleUser, Content: run.Message})
	}
	res, err := sessions.AppendInTx(ctx, tx, sess, msgs, run.ID, run.RequestID, now)
	if err != nil {
		return err
	}
	run.TriggerSeq = res.Messages[len(res.Messages)-1].Seq
	return nil
}

// StartInTx starts a run on the owner's session inside the caller's write transaction tx, at
// now, under the multitask policy (reject or enqueue) and with key as the run's request id: the
// scheduler starts a tick's run in the transaction that claims the tick. The caller has taken the
// session's lock (tx.LockSession) and, once tx committed, calls Started with the run.
func (s *Service) StartInTx(ctx context.Context, tx store.Tx, owner, sessionID string, in carryon.NewRun, policy carryon.Multitask, key string, now time.Time) (*carryon.Run, error) {
	if policy != carryon.MultitaskReject && policy != carryon.MultitaskEnqueue {
		return nil, carryon.Errorf(carryon.EINVALID, "multitask must be reject or enqueue, not %q", policy)
	}
	if err := validMessage(in.Message); err != nil {
		return nil, err
	}
	return s.startTx(ctx, sessionID, in, policy, key, nil)(tx, owner, now.UTC().Truncate(time.Microsecond))
}

// Started tells the runners and the run's followers in this process of a run StartInTx started,
// once its transaction committed.
func (s *Service) Started(runID string) {
	s.notify.local(runID)
	s.Wake()
}
