// Package hub opens carryon in-process, for a Go program that embeds it without HTTP
// (docs/LIBRARY.md): the database, the hub services over it (sessions, runs with their runners
// working, users, long-term memory), the agent profiles and their background work, with the
// defaults of "carryon serve".
//
// The zero Options open the SQLite file carryon.db in the data directory; another database is
// opened by its driver's constructor and passed in (Options.Store), so a program links only the
// driver it uses:
//
//	db, err := postgres.Open(ctx, "postgres://…")
//	h, err := hub.Open(ctx, hub.Options{Store: db})
//
// Every call acts for the user in its context (carryon.NewContextWithUser), with the same
// ownership, versions, request ids and runners as over HTTP.
package hub

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/telemetry"
)

// Store is an opened database: what store/sqlite's and store/postgres's Open return.
type Store = store.Store

// Options say where the hub's data is and how it behaves. The zero value is the hub "carryon
// serve" runs without flags: the SQLite database carryon.db in the data directory, the default
// agent profile (the offline scripted model), eight runners.
type Options struct {
	// Data is the data directory: the SQLite database, the workspaces. Default
	// $XDG_DATA_HOME/carryon, else ~/.local/share/carryon.
	Data string
	// Store is the database (sqlite.Open, postgres.Open); Close closes it. Nil is the SQLite
	// file carryon.db in Data, opened with SQLiteSynchronous: FULL (default, survives power
	// loss) or NORMAL (only process crashes).
	Store             Store
	SQLiteSynchronous string
	// AgentsFile is the agents file (docs/AGENTS.md) the runs' profiles come from; empty is the
	// one default profile: the offline scripted model with every built-in tool.
	AgentsFile string
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
	// Logger logs the background work; default discards.
	Logger *slog.Logger
	// Getenv reads the environment for the providers' keys (and the agents file's ${VAR}s);
	// default os.Getenv.
	Getenv func(string) string
	// SpanExporter, when set, receives a span of every run attempt, model call and tool call
	// (OpenTelemetry GenAI conventions, docs/OPERATIONS.md); TraceContent adds the messages'
	// text to them. Metrics, when set, receives the run, model and tool metrics.
	SpanExporter sdktrace.SpanExporter
	TraceContent bool
	Metrics      prometheus.Registerer
}

// Hub is carryon opened in-process. Close stops the background work and closes the store.
type Hub struct {
	// Sessions owns sessions, messages and working memory.
	Sessions carryon.SessionService
	// Runs starts runs and executes them on this process's runners (unless NoWorkers).
	Runs carryon.RunService
	// Users owns users and API keys.
	Users carryon.UserService
	// LongTerm owns the users' long-term memory.
	LongTerm carryon.LongTermService
	// Schedules owns the schedules; this process's scheduler fires them (docs/SCHEDULES.md).
	Schedules carryon.ScheduleService
	// Agents lists the agent profiles the runs use, with their tools.
	Agents carryon.AgentService

	app *app.Hub
	tel *telemetry.Telemetry
}

// Open opens the database (migrating it), builds the services and starts their background work
// (the sweepers, the run listener and, unless NoWorkers, the runners). ctx bounds the opening
// only; the background work runs until Close.
func Open(ctx context.Context, opt Options) (*Hub, error) {
	getenv := opt.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var set *agents.Set
	if opt.AgentsFile != "" {
		var err error
		if set, err = agents.Load(opt.AgentsFile, agents.Options{Getenv: getenv, Builtin: app.BuiltinTools(getenv)}); err != nil {
			return nil, err
		}
	}
	var tel *telemetry.Telemetry
	if opt.SpanExporter != nil || opt.Metrics != nil {
		tel = telemetry.New(telemetry.Options{Exporter: opt.SpanExporter, CaptureContent: opt.TraceContent, Registerer: opt.Metrics})
	}
	a, err := app.Open(ctx, app.Options{
		Data: opt.Data, Store: opt.Store, SQLiteSynchronous: opt.SQLiteSynchronous, Agents: set, Workspaces: opt.Workspaces,
		IdleTTL: opt.IdleTTL, PurgeAfter: opt.PurgeAfter, ClosedRetention: opt.ClosedRetention, RequestIDTTL: opt.RequestIDTTL,
		MaxSessionsPerUser: opt.MaxSessionsPerUser, SweepInterval: opt.SweepInterval, Workers: opt.Workers, NoWorkers: opt.NoWorkers,
		LeaseTTL: opt.LeaseTTL, MaxAttempts: opt.MaxAttempts, ToolOutputTimeout: opt.ToolOutputTimeout,
		Logger: opt.Logger, Getenv: getenv, Telemetry: tel,
	})
	if err != nil {
		return nil, err
	}
	return &Hub{Sessions: a.Sessions, Runs: a.Runs, Users: a.Users, LongTerm: a.LongTerm, Schedules: a.Schedules, Agents: a.Agents, app: a, tel: tel}, nil
}

// Preview is what the model of the session's agent profile would be sent now, as the caller.
func (h *Hub) Preview(ctx context.Context, sessionID string) (*carryon.ContextPreview, error) {
	return h.app.Preview(ctx, sessionID)
}

// Compact stores a compaction of the session as the caller: the model of the session's agent
// profile summarizes its history but the last in.KeepLast messages, and the context sends the
// summary in their place from then on (carryon.Compaction). Nothing is written when the
// summarizer fails (EUNAVAILABLE) or a run is active (EBUSY).
func (h *Hub) Compact(ctx context.Context, sessionID string, in carryon.CompactInput) (*carryon.Compaction, error) {
	return h.app.Compact(ctx, sessionID, in)
}

// Compactions lists the session's compactions, oldest first, as the caller.
func (h *Hub) Compactions(ctx context.Context, sessionID string) (*carryon.CompactionPage, error) {
	return h.app.Compactions(ctx, sessionID)
}

// Ping checks that the database answers.
func (h *Hub) Ping(ctx context.Context) error { return h.app.Ping(ctx) }

// Close stops the background work (runs in progress stop and release their leases; the next
// Open of any process resumes them), then the agents' MCP servers, then closes the store and
// flushes the spans. It is safe to call more than once.
func (h *Hub) Close() error {
	err := h.app.Close()
	if h.tel != nil {
		_ = h.tel.Shutdown(context.Background())
	}
	return err
}
