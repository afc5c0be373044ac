// Package app assembles carryon in one process: the hub services over a store (sessions, runs
// with their runners working, users, long-term memory), the agent profiles with their tools and
// MCP servers, and their background work, with the defaults of "carryon serve". The server
// (cmd/carryon) and the public package hub, an embedder's entry point, are built on it.
package app

import (
	"context"

	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/extraction"
	"github.com/carryon-hub/carryon/internal/limits"
	"github.com/carryon-hub/carryon/internal/longterm"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/schedules"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/internal/webhooks"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// Defaults of Options, the same as those of "carryon serve"'s flags.
const (
	DefaultWorkers       = 8
	DefaultLeaseTTL      = 15 * time.Second
	DefaultMaxAttempts   = 5
	DefaultSweepInterval = 10 * time.Minute
)

// Options say where the hub's data is and how it behaves. The zero value is the hub "carryon
// serve" runs without flags: the SQLite database carryon.db in DefaultDataDir, the default agent
// profile (the offline scripted model), eight runners.
type Options struct {
	// Data is the data directory: the SQLite database, the local key file, the workspaces.
	// Default DefaultDataDir.
	Data string
	// Store is the opened database (package dbopen opens one from a DSN); Close closes it. Nil
	// is the SQLite file carryon.db in Data, opened with SQLiteSynchronous: FULL (default,
	// survives power loss) or NORMAL (only process crashes).
	Store             store.Store
	SQLiteSynchronous string
	// Agents are the agent profiles runs use; nil is the one default profile of the flags'
	// defaults (agents.FromFlags with the scripted provider).
	Agents *agents.Set
	// Workspaces is the directory of the sessions' workspaces; default Data/workspaces.
	Workspaces string
	// IdleTTL, PurgeAfter, ClosedRetention and RequestIDTTL are the sessions' lifetimes (zero:
	// the defaults of the root package; ClosedRetention zero keeps closed sessions).
	IdleTTL, PurgeAfter, ClosedRetention, RequestIDTTL time.Duration
	// MaxSessionsPerUser, when positive, is the most sessions a user keeps: the sweeper deletes
	// the least recently active ones beyond it. Zero keeps every session.
	MaxSessionsPerUser int
	// SweepInterval is how often expired sessions and request ids are swept (default 10 min).
	SweepInterval time.Duration
	// Workers is how many runs this process executes at once (default 8); NoWorkers serves
	// the services without running any run here (another process's runners take them).
	Workers   int
	NoWorkers bool
	// LeaseTTL, MaxAttempts and ToolOutputTimeout shape the runners (zero: the defaults).
	LeaseTTL          time.Duration
	MaxAttempts       int
	ToolOutputTimeout time.Duration
	// ScheduleMinInterval is the shortest every a schedule may have (zero:
	// carryon.DefaultMinScheduleInterval). NoScheduler fires no schedule in this process (another
	// process's scheduler does); Now, when set, is the schedules' clock (tests).
	ScheduleMinInterval time.Duration
	NoScheduler         bool
	Now                 func() time.Time
	// Logger logs the background work; default discards.
	Logger *slog.Logger
	// Getenv reads the environment for the default profile's provider keys and the test tools
	// (CARRYON_TEST_TOOLS); default os.Getenv.
	Getenv func(string) string
	// Instrument, when set, is told the kind, duration and error of every store transaction.
	Instrument func(kind string, d time.Duration, err error)
	// Telemetry traces the runs, model and tool calls and counts them (package telemetry); nil
	// for none.
	Telemetry *telemetry.Telemetry
	// Webhooks configures the webhook delivery worker every instance runs and the URL policy
	// of the webhooks API (its Policy; zero: https and public addresses only).
	Webhooks webhooks.WorkerConfig
	// Limits are the server's per-user limits (package limits; a nil field or 0: no bound); an
	// admin's limits for a user override them. Its MaxRuns bounds the runs a user has running.
	Limits carryon.Limits
	// ShareLimits shares the limits' counts between instances through the store (several
	// instances on PostgreSQL); QuotaRecount is how old a user's count of stored bytes may be
	// (zero: limits.DefaultRecount).
	ShareLimits  bool
	QuotaRecount time.Duration
}

// Hub is carryon opened in-process: the services the HTTP server and the adapters use. Every
// call acts for the user in its context (carryon.NewContextWithUser), with the same ownership,
// versions and request ids as over HTTP. Close stops the background work and closes the store.
type Hub struct {
	// Sessions owns sessions, messages and working memory.
	Sessions *sessions.Service
	// Runs starts runs and executes them on this process's runners (unless NoWorkers).
	Runs *runs.Service
	// Users owns users and API keys.
	Users *users.Service
	// LongTerm owns the users' long-term memory.
	LongTerm *longterm.Service
	// Schedules owns the schedules; its scheduler fires them in this process (unless NoScheduler).
	Schedules *schedules.Service
	// Agents are the agent profiles the runs use.
	Agents *agents.Set
	// Limits counts every user's requests, streams and bytes against their limits, and serves
	// the admin's per-user limits.
	Limits *limits.Limiter
	// Webhooks owns the users' webhooks and their delivery logs; its worker delivers the
	// outbox in the background.
	Webhooks *webhooks.Service
	// Store is the store the services write through (instrumented when Options.Instrument is set).
	Store store.Store
	// Data is the data directory.
	Data string

	raw          store.Store
	profiles     *profiles
	extract      *extraction.Service
	stop         context.CancelFunc
	bg           sync.WaitGroup
	closeSources func()
	closeOnce    sync.Once
	closeErr     error
}

// Open opens the database (migrating it), builds the services and starts their background work
// (the sweepers, the run listener and, unless NoWorkers, the runners). ctx bounds the opening
// only; the background work runs until Close.
func Open(ctx context.Context, opt Options) (*Hub, error) {
	opt = opt.withDefaults()
	if opt.Agents == nil {
		set, err := agents.FromFlags(agents.Flags{Provider: agents.KindScripted, MaxSteps: 12, ContextBudget: 16000},
			agents.Options{Getenv: opt.Getenv, Builtin: BuiltinTools(opt.Getenv)})
		if err != nil {
			return nil, err
		}
		opt.Agents = set
	}
	raw := opt.Store
	if raw == nil {
		if err := os.MkdirAll(opt.Data, 0o700); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		var err error
		if raw, err = sqlite.Open(ctx, filepath.Join(opt.Data, "carryon.db"), sqlite.WithSynchronous(strings.ToUpper(opt.SQLiteSynchronous))); err != nil {
			return nil, err
		}
	}
	st := raw
	if opt.Instrument != nil {
		st = store.Instrument(raw, opt.Instrument)
	}
	h := &Hub{Store: st, raw: raw, Data: opt.Data, Agents: opt.Agents}
	tel := opt.Telemetry
	keys := ""
	notifier, shared := store.AsNotifier(raw)
	if !shared && opt.Data != "" {
		keys = filepath.Join(opt.Data, users.EpochFile) // SQLite: the CLI's revocations touch it
	}
	h.Users = users.New(st, nil).KeepRequestIDs(opt.RequestIDTTL).CacheKeys(keys)
	h.Sessions = sessions.New(st, sessions.Config{
		IdleTTL: opt.IdleTTL, PurgeAfter: opt.PurgeAfter, ClosedRetention: opt.ClosedRetention, IdempotencyTTL: opt.RequestIDTTL,
		Workspaces: opt.Workspaces, Logger: opt.Logger, Agents: opt.Agents, MaxSessionsPerUser: opt.MaxSessionsPerUser,
		OnSweep: func(res sessions.SweepResult, err error) {
			tel.Swept("sessions", err, map[string]int64{"sessions": int64(res.Sessions), "request_ids": res.RequestIDs, "over_limit": int64(res.OverLimit), "users_forgotten": int64(res.Forgotten), "orphan_workspaces": int64(res.OrphanWorkspaces), "staged_imports": int64(res.StagedImports)})
		},
	})
	h.Users.ForgetWith(h.Sessions)
	h.LongTerm = longterm.New(st, nil).KeepRequestIDs(opt.RequestIDTTL).OnSweep(func(n int64, err error) {
		tel.Swept("long_term", err, map[string]int64{"long_term_items": n})
	}).WithEmbeddings(embeddings(opt.Agents, tel, opt.Logger))
	if opt.Agents.Embeddings != nil {
		h.Sessions.RecallWith(h.LongTerm) // the context's memory by meaning too
	}
	sources, closeSources, err := mcpSources(opt.Agents, opt.Logger)
	if err != nil {
		raw.Close()
		return nil, err
	}
	h.closeSources = closeSources
	h.profiles, err = newProfiles(opt.Agents, opt.Getenv, opt.Workspaces, h.Sessions, h.LongTerm, sources, opt.Logger, tel)
	if err != nil {
		closeSources()
		raw.Close()
		return nil, err
	}
	h.extract = extraction.New(st, h.LongTerm, h.profiles.Learner).WithIdle(idleLearners(opt.Agents), opt.Logger).WithSpans(tel)
	workers := opt.Workers
	if opt.NoWorkers {
		workers = 0
	}
	h.Runs = runs.New(st, h.Sessions, nil, runs.Config{Logger: opt.Logger, LeaseTTL: opt.LeaseTTL, MaxAttempts: opt.MaxAttempts,
		Workers: workers, Agents: h.profiles, ToolOutputTimeout: opt.ToolOutputTimeout, Telemetry: tel, MaxRunsPerUser: carryon.Int(opt.Limits.MaxRuns),
		Prices: opt.Agents.Price})
	h.Limits = limits.New(limits.Config{Defaults: opt.Limits, Store: st, InstanceID: carryon.NewID("inst_"), Share: opt.ShareLimits,
		Recount: opt.QuotaRecount, Now: opt.Now, Logger: opt.Logger})
	h.Sessions.EndRunsWith(h.Runs) // forgetting a user stops its runs before their rows go
	h.Schedules = schedules.New(st, h.Runs, schedules.Config{Now: opt.Now, MinInterval: opt.ScheduleMinInterval,
		RequestIDTTL: opt.RequestIDTTL, Logger: opt.Logger, Telemetry: tel})
	bgCtx, stop := context.WithCancel(context.Background())
	h.stop = stop
	h.bg.Go(func() { h.Sessions.RunSweeper(bgCtx, opt.SweepInterval, opt.Logger) })
	h.bg.Go(func() { h.LongTerm.RunSweeper(bgCtx, opt.SweepInterval, opt.Logger) })
	h.bg.Go(func() { h.LongTerm.RunReembedder(bgCtx, carryon.NewID("inst_"), opt.SweepInterval) })
	h.bg.Go(func() { h.extract.RunIdle(bgCtx, carryon.NewID("inst_"), opt.SweepInterval) })
	h.bg.Go(func() { h.Runs.Listen(bgCtx) })
	if shared { // another instance's revocations and forgets, and a lost connection, drop the cached keys
		h.bg.Go(func() { _ = notifier.Listen(bgCtx, users.KeysChannel, func(string) { h.Users.DropCachedKeys() }) })
	}
	h.bg.Go(func() { h.Limits.Run(bgCtx) })
	whCfg := opt.Webhooks
	if whCfg.Logger == nil {
		whCfg.Logger = opt.Logger
	}
	worker := webhooks.NewWorker(st, whCfg)
	h.Webhooks = webhooks.NewService(st, whCfg.Policy, nil, worker.Wake)
	h.bg.Go(func() { worker.Run(bgCtx) })
	if workers > 0 {
		h.bg.Go(func() { h.Runs.Work(bgCtx) })
	}
	if !opt.NoScheduler {
		h.bg.Go(func() { h.Schedules.Run(bgCtx) })
	}
	return h, nil
}

// withDefaults fills in the zero fields of opt.
func (opt Options) withDefaults() Options {
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	if opt.Data == "" {
		opt.Data = DefaultDataDir(opt.Getenv)
	}
	if opt.Workspaces == "" {
		opt.Workspaces = filepath.Join(opt.Data, "workspaces")
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	setDefault(&opt.IdleTTL, carryon.DefaultIdleTTL)
	setDefault(&opt.PurgeAfter, carryon.DefaultPurgeAfter)
	setDefault(&opt.RequestIDTTL, carryon.DefaultIdempotencyTTL)
	setDefault(&opt.SweepInterval, DefaultSweepInterval)
	setDefault(&opt.LeaseTTL, DefaultLeaseTTL)
	setDefault(&opt.ToolOutputTimeout, carryon.DefaultToolOutputTimeout)
	setDefault(&opt.Workers, DefaultWorkers)
	setDefault(&opt.MaxAttempts, DefaultMaxAttempts)
	if opt.SQLiteSynchronous == "" {
		opt.SQLiteSynchronous = "FULL"
	}
	return opt
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Preview is what the model of the session's agent profile would be sent now, as the caller.
func (h *Hub) Preview(ctx context.Context, sessionID string) (*carryon.ContextPreview, error) {
	return h.profiles.Preview(ctx, h.Sessions, sessionID)
}

// Compact stores a compaction of the session as the caller, its summary written by the model of
// the session's agent profile.
func (h *Hub) Compact(ctx context.Context, sessionID string, in carryon.CompactInput) (*carryon.Compaction, error) {
	return h.profiles.Compact(ctx, h.Sessions, sessionID, in)
}

// Extract learns facts from the caller's session into their long-term memory, with the model of
// the session's agent profile (package extraction).
func (h *Hub) Extract(ctx context.Context, sessionID string) (*carryon.Extraction, error) {
	return h.extract.Extract(ctx, sessionID)
}

// Compactions lists the session's compactions, oldest first, as the caller.
func (h *Hub) Compactions(ctx context.Context, sessionID string) (*carryon.CompactionPage, error) {
	return h.Sessions.ListCompactions(ctx, sessionID)
}

// ActiveRunCounts counts the runs in each active state across all users (the gauges of
// telemetry.RegisterActiveRuns).
func (h *Hub) ActiveRunCounts(ctx context.Context) (map[carryon.RunStatus]int64, error) {
	var out map[carryon.RunStatus]int64
	err := h.raw.Read(ctx, func(tx store.Tx) error {
		var err error
		out, err = tx.ActiveRunCounts(ctx)
		return err
	})
	return out, err
}

// Ping checks that the database answers.
func (h *Hub) Ping(ctx context.Context) error { return h.raw.Ping(ctx) }

// Close stops the background work (runs in progress stop and release their leases; the next
// Open of any process resumes them), then the agents' MCP servers, then closes the store. It
// is safe to call more than once.
func (h *Hub) Close() error {
	h.closeOnce.Do(func() {
		h.stop()
		h.bg.Wait()
		h.closeSources()
		h.closeErr = h.raw.Close()
	})
	return h.closeErr
}

// DefaultDataDir is $XDG_DATA_HOME/carryon, or ~/.local/share/carryon, or carryon-data.
func DefaultDataDir(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "carryon")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "carryon")
	}
	return "carryon-data"
}

// embeddings configures the long-term memory's vectors from the agents file (nil: none): the
// provider's client with the model calls' retries and telemetry.
func embeddings(set *agents.Set, tel *telemetry.Telemetry, log *slog.Logger) *longterm.Embeddings {
	e := set.Embeddings
	if e == nil {
		return nil
	}
	return &longterm.Embeddings{
		Embedder: tel.Embedder(model.WithEmbedRetry(set.OpenEmbedder(), model.RetryPolicy{})),
		Model:    e.Model, Dimensions: e.Dimensions, BatchSize: e.BatchSize, Timeout: e.Timeout,
		ConsolidateAbove: e.ConsolidateAbove, MaxInputBytes: e.MaxInputBytes, CacheBytes: int64(e.CacheMB) << 20, Log: log,
	}
}

// idleLearners is how long each profile that learns facts on its own waits for a session to be
// idle (memory_extraction.idle_after; profiles without it, or with 0, learn only when asked).
func idleLearners(set *agents.Set) map[string]time.Duration {
	out := map[string]time.Duration{}
	if set == nil {
		return out
	}
	for name, p := range set.Profiles {
		if p.Extraction != nil && p.Extraction.IdleAfter > 0 {
			out[name] = p.Extraction.IdleAfter
		}
	}
	return out
}
