package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/a2a"
	"github.com/carryon-hub/carryon/internal/agui"
	"github.com/carryon-hub/carryon/internal/aisdk"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/dbopen"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/limits"
	"github.com/carryon-hub/carryon/internal/mcpserver"
	"github.com/carryon-hub/carryon/internal/openaiapi"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/internal/webhooks"
	"github.com/carryon-hub/carryon/internal/webui"
	"github.com/carryon-hub/carryon/store/postgres"
)

const serveUsage = `usage: carryon serve [flags]
  Run the session hub: the HTTP API on --addr over the database in --data (or --db), the MCP
  server at /mcp (streamable HTTP, stateless; the same API keys as bearer tokens), the web
  inspector at /ui/ (sign in with an API key; see docs/INSPECTOR.md), the A2A endpoints at
  /a2a (agent cards at /.well-known/agent-card.json; see docs/A2A.md), and runners for the
  agent's runs; GET / redirects to the inspector. It prints "carryon listening on URL (data
  DIR)" first, then where the local user's key file is, then the inspector's URL. SIGINT or SIGTERM stops it cleanly; runs in progress
  resume at the next start.

Examples:
  carryon serve
  carryon serve --addr 0.0.0.0:8420 --db postgres://carryon@db.internal:5432/carryon
  OPENAI_API_KEY=sk-... carryon serve --provider openai --model gpt-4o-mini
  carryon serve --ui-local-key         (the inspector at /ui/ offers the local key on this machine)
  carryon serve --agents agents.yaml   (the agent profiles of a file; see "carryon agents check")`

func runServe(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", serveUsage, stdout)
	var sf storeFlags
	sf.register(fs.FlagSet, getenv)
	addr := fs.String("addr", DefaultAddr, "address to listen on")
	idleTTL := fs.Duration("idle-ttl", carryon.DefaultIdleTTL, "idle time after which a session expires")
	purge := fs.Duration("purge-after", carryon.DefaultPurgeAfter, "how long an expired session is kept before it is purged")
	closedRetention := fs.Duration("closed-retention", 0, "how long a closed session is kept after it was closed before it is purged; 0 keeps closed sessions until they are deleted")
	maxSessions := fs.Int("max-sessions-per-user", 0, "the most sessions a user keeps: the sweeper deletes the least recently active ones beyond it; 0 keeps every session")
	idemTTL := fs.Duration("request-id-ttl", carryon.DefaultIdempotencyTTL, "how long request ids and their answers are kept")
	sweep := fs.Duration("sweep-interval", 10*time.Minute, "how often expired sessions and request ids are swept")
	requireVersion := fs.Bool("require-version", false, "refuse writes without an expected version with 428")
	maxBody := fs.Int64("max-body", 4<<20, "request body limit in bytes")
	bodyTimeout := fs.Duration("body-timeout", httpapi.DefaultBodyReadTimeout, "how long a request body may take to arrive before the answer is 408")
	maxRequests := fs.Int("max-requests-per-user", httpapi.DefaultMaxRequestsPerUser, "requests one user may have in flight at once, on every front door; more are answered 429 (-1: no bound)")
	maxStreams := fs.Int("max-streams-per-user", httpapi.DefaultMaxStreamsPerUser, "event streams one user may have open at once; more are answered 429 (-1: no bound)")
	ratePerUser := fs.Float64("rate-per-user", 0, "requests a second one user may make, on every front door (a token bucket per user; 429 with RateLimit headers past it; 0: no bound)")
	burstPerUser := fs.Int64("burst-per-user", 0, "requests one user may make at once before --rate-per-user holds it back (0: one second of the rate)")
	maxRuns := fs.Int64("max-runs-per-user", 0, "runs one user may have running at once, across instances; more wait queued (0: no bound)")
	quota := fs.Int64("max-stored-bytes-per-user", 0, "bytes of messages, working memory and long-term memory one user may store; writes past it are answered 507 (0: no bound)")
	quotaRecount := fs.Duration("quota-recount", limits.DefaultRecount, "how old a user's count of stored bytes may be: the quota's tolerance is what a user writes in it")
	logJSON := fs.Bool("log-json", false, "log as JSON lines instead of text")
	leaseTTL := fs.Duration("lease-ttl", 15*time.Second, "how long a runner's lease on a run lasts without a heartbeat; a run whose runner died is taken over after it")
	workers := fs.Int("workers", 8, "runs this instance executes at once; 0 serves the API and streams only")
	schedMin := fs.Duration("schedule-min-interval", carryon.DefaultMinScheduleInterval, "the shortest every a schedule may have (docs/SCHEDULES.md)")
	noScheduler := fs.Bool("no-scheduler", false, "fire no schedule in this process (another instance on the same database does)")
	maxAttempts := fs.Int("max-attempts", 5, "a run whose runner died this many times is parked as failed")
	toolOutputTimeout := fs.Duration("tool-output-timeout", carryon.DefaultToolOutputTimeout, "a run that waits this long for a client's tool outputs fails")
	otlpEndpoint := fs.String("otlp-endpoint", "", "send traces to this OTLP/HTTP endpoint (e.g. http://localhost:4318); empty: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, else no tracing")
	traceContent := fs.Bool("trace-content", false, "put message contents (prompts, replies, tool arguments and results) in the spans")
	whAllowHTTP := fs.Bool("webhook-allow-http", false, "accept http:// webhook URLs (default: https only)")
	whAllowPrivate := fs.Bool("webhook-allow-private", false, "let webhooks reach loopback, private, link-local (cloud metadata) and reserved addresses (default: refused at create and on every connection)")
	whTimeout := fs.Duration("webhook-timeout", 10*time.Second, "how long one webhook delivery attempt may take (connect, TLS, request, answer)")
	whRetryFor := fs.Duration("webhook-retry-for", 24*time.Hour, "how long a failing webhook delivery is retried (exponential backoff with jitter) before it is marked failed")
	whMinBackoff := fs.Duration("webhook-min-backoff", time.Second, "the delay before the first retry of a webhook delivery; it doubles at each retry")
	whMaxBackoff := fs.Duration("webhook-max-backoff", 10*time.Minute, "the longest delay between two attempts of a webhook delivery")
	readDSN := fs.String("read-dsn", "", "a streaming standby of the PostgreSQL --db: listings and the inspector's views read from it while it is within --read-max-lag (docs/SCALING.md)")
	readMaxLag := fs.Duration("read-max-lag", postgres.DefaultReadMaxLag, "how far behind the primary the --read-dsn standby may be for its answers; further behind or unreachable, the primary answers")
	cpuProfile := fs.String("cpu-profile", "", "write a CPU profile (pprof) of the whole serve to this file, closed when it stops (for docs/BENCHMARKS.md)")
	uiLocalKey := fs.Bool("ui-local-key", false, "offer the local user's key to the inspector at /ui/ when it is opened from this machine (loopback only; see docs/INSPECTOR.md)")
	var af agentFlags
	af.register(fs.FlagSet)
	if pos, err := fs.parse(getenv, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fs.misuse()
	}
	if *closedRetention < 0 {
		return usagef("--closed-retention must be 0 or more")
	}
	if *maxSessions < 0 {
		return usagef("--max-sessions-per-user must be 0 or more")
	}
	if *ratePerUser < 0 || *burstPerUser < 0 || *maxRuns < 0 || *quota < 0 || *quotaRecount <= 0 {
		return usagef("--rate-per-user, --burst-per-user, --max-runs-per-user and --max-stored-bytes-per-user must be 0 or more, --quota-recount more than 0")
	}
	if *workers < 0 {
		return usagef("--workers must be 0 or more")
	}
	if *readMaxLag <= 0 {
		return usagef("--read-max-lag must be more than 0")
	}
	// The agent profiles are checked before anything opens: a mistake in the file stops the start.
	set, err := af.load(getenv)
	if err != nil {
		return err
	}
	var log *slog.Logger
	if *logJSON {
		log = slog.New(telemetry.LogHandler(slog.NewJSONHandler(stderr, nil)))
	} else {
		log = slog.New(telemetry.LogHandler(slog.NewTextHandler(stderr, nil)))
	}

	if ignored := af.ignoredBy(fs.FlagSet); len(ignored) > 0 {
		log.Warn("the agents file decides the agents; these flags are not used", "flags", strings.Join(ignored, ", "))
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	txSeconds := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "carryon_store_tx_duration_seconds", Help: "Duration of store transactions by kind (read, replica: a read the --read-dsn standby answered, write) and outcome.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14),
	}, []string{"kind", "outcome"})
	reg.MustRegister(txSeconds)
	tel, err := telemetry.Setup(ctx, telemetry.Config{Endpoint: *otlpEndpoint, CaptureContent: *traceContent, Getenv: getenv, Registerer: reg})
	if err != nil {
		return usagef("%v", err)
	}
	defer func() {
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(shut); err != nil {
			log.Warn("the last spans could not be sent", "err", err)
		}
	}()

	dsn, err := sf.dsn()
	if err != nil {
		return err
	}
	// Said before the database opens: a first start makes the schema, an upgrade migrates it,
	// and a person watching sees why nothing answers yet.
	log.Info("opening the database; migrations run first", "store", storeKind(dsn))
	var pgOpts []postgres.Option
	if *readDSN != "" {
		if !isPostgres(dsn) {
			return usagef("--read-dsn needs a PostgreSQL --db (postgres://…)")
		}
		if !isPostgres(*readDSN) {
			return usagef("--read-dsn must be a postgres:// URL")
		}
		pgOpts = append(pgOpts, postgres.WithReadReplica(*readDSN, *readMaxLag))
	}
	db, err := dbopen.Open(ctx, sf.data, dsn, sf.pgMaxConns, sf.synchronous, pgOpts...)
	if err != nil {
		return err
	}
	h, err := app.Open(ctx, app.Options{
		Data: sf.data, Store: db,
		Agents: set, Workspaces: af.workspacesDir(sf.data),
		IdleTTL: *idleTTL, PurgeAfter: *purge, ClosedRetention: *closedRetention, RequestIDTTL: *idemTTL,
		MaxSessionsPerUser: *maxSessions, SweepInterval: *sweep, Workers: *workers, NoWorkers: *workers == 0, LeaseTTL: *leaseTTL,
		MaxAttempts: *maxAttempts, ToolOutputTimeout: *toolOutputTimeout, Logger: log, Getenv: getenv, Telemetry: tel,
		Webhooks: webhooks.WorkerConfig{Policy: webhooks.Policy{AllowHTTP: *whAllowHTTP, AllowPrivate: *whAllowPrivate},
			Timeout: *whTimeout, RetryFor: *whRetryFor, MinBackoff: *whMinBackoff, MaxBackoff: *whMaxBackoff, Registerer: reg},
		ScheduleMinInterval: *schedMin, NoScheduler: *noScheduler,
		Limits:      serverLimits(*maxRequests, *maxStreams, *ratePerUser, *burstPerUser, *maxRuns, *quota),
		ShareLimits: isPostgres(dsn), QuotaRecount: *quotaRecount,
		Instrument: func(kind string, d time.Duration, err error) {
			outcome := "ok"
			switch {
			case errors.Is(err, context.Canceled):
				outcome = "canceled" // the client went away; not a failure of the store
			case err != nil:
				outcome = carryon.ErrorCode(err)
			}
			txSeconds.WithLabelValues(kind, outcome).Observe(d.Seconds())
		},
	})
	if err != nil {
		return err
	}
	// The background work (sweepers, the listener, the runners) and the agents' MCP servers have
	// stopped before serve returns and the database closes: nothing writes to the data directory
	// afterwards.
	defer h.Close()
	telemetry.RegisterActiveRuns(reg, h.ActiveRunCounts)
	ss, us, rs, ms := h.Sessions, h.Users, h.Runs, h.LongTerm
	ckey, err := compactKey(sf.data, getenv)
	if err != nil {
		return err
	}
	if _, err := us.EnsureLocalUser(ctx, sf.data); err != nil {
		return fmt.Errorf("local user: %w", err)
	}
	streamsDone := make(chan struct{})
	handler := httpapi.NewServer(httpapi.Config{
		StreamsDone: streamsDone,
		Sessions:    ss, Users: us, Runs: rs, LongTerm: ms, Webhooks: h.Webhooks, Logger: log, Ready: h.Ping, MaxBodyBytes: *maxBody,
		BodyReadTimeout: *bodyTimeout, Limits: h.Limits,
		RequireVersion: *requireVersion, Registry: reg, Telemetry: tel,
		Agents:       set,
		Schedules:    h.Schedules,
		Context:      h.Preview,
		Compact:      h.Compact,
		Extract:      h.Extract,
		Compactions:  h.Compactions,
		Export:       h.Sessions.Export,
		Storage:      h.Sessions.Storage,
		SessionUsage: h.Sessions.SessionUsage,
		Import:       importer(h.Sessions),
		MCP: mcpserver.Handler(mcpserver.Config{Sessions: ss, Runs: rs, LongTerm: ms, Schedules: h.Schedules, Webhooks: h.Webhooks, Logger: log, Compact: h.Compact, Extract: h.Extract,
			RequireVersion: *requireVersion, MaxBodyBytes: *maxBody, Writes: tel, Quota: h.Limits.Quota}),
		UI: webui.Handler(webuiConfig(*uiLocalKey, sf.data)),
		Doors: []httpapi.FrontDoor{
			openaiapi.New(openaiapi.Config{Sessions: ss, Runs: rs, Agents: set, StreamsDone: streamsDone, MaxBodyBytes: *maxBody,
				Compact: h.Compact, CompactKey: ckey}),
			a2a.New(a2a.Config{Sessions: ss, Runs: rs, Agents: set, StreamsDone: streamsDone, MaxBodyBytes: *maxBody, Quota: h.Limits.Quota}),
			agui.New(agui.Config{Sessions: ss, Runs: rs, Agents: set, StreamsDone: streamsDone, MaxBodyBytes: *maxBody}),
			aisdk.New(aisdk.Config{Sessions: ss, Runs: rs, StreamsDone: streamsDone, MaxBodyBytes: *maxBody}),
		},
	})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	srv.RegisterOnShutdown(func() { close(streamsDone) })

	// The address and the key file are said once, on stdout: scripts read the first line.
	def, _ := set.Agent(carryon.DefaultAgent)
	log.Info("carryon started", "version", carryon.Version, "model", def.Model, "agents", strings.Join(set.Names(), ","), "workers", *workers, "tracing", tel.Tracing())
	fmt.Fprintf(stdout, "carryon listening on http://%s (data %s)\n", ln.Addr(), sf.data)
	fmt.Fprintf(stdout, "local user's key file: %s (the client commands on this machine read it)\n", filepath.Join(sf.data, users.LocalKeyFile))
	fmt.Fprintf(stdout, "inspector: %s (docs/INSPECTOR.md)\n", inspectorURL(ln.Addr()))

	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err = srv.Shutdown(shutCtx)
	h.Close() // runs in progress stop at once and release their leases; the next start resumes them
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// webuiConfig is the inspector's configuration: with localKey, the local user's key (read from
// the data directory at each request) is offered to pages opened from this machine.
func webuiConfig(localKey bool, data string) webui.Config {
	if !localKey {
		return webui.Config{}
	}
	return webui.Config{LocalKey: func() (string, error) { return users.ReadLocalKey(data) }}
}

// inspectorURL is where a browser on this machine opens the inspector of a server listening on
// addr: an unspecified address (0.0.0.0, ::) is reached at the loopback one.
func inspectorURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + httpapi.UIPath
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + httpapi.UIPath
}

// importer is POST /v1/sessions/import's call: a bundle goes to the session service as it is,
// OpenAI conversation items are mapped to messages by the OpenAI door's mapping first.
func importer(ss *sessions.Service) func(context.Context, carryon.ImportInput) (*carryon.ImportResult, error) {
	return func(ctx context.Context, in carryon.ImportInput) (*carryon.ImportResult, error) {
		if in.Format != carryon.ImportOpenAI {
			return ss.Import(ctx, in)
		}
		msgs, err := openaiapi.ImportItems(in.Bundle, in.Order)
		if err != nil {
			return nil, err
		}
		return ss.ImportMessages(ctx, in.Bundle, msgs, in)
	}
}

// serverLimits are the per-user limits of serve's flags.
func serverLimits(maxRequests, maxStreams int, rate float64, burst, maxRuns, quota int64) carryon.Limits {
	l := httpapi.DefaultLimits(maxRequests, maxStreams)
	l.RequestsPerSecond, l.RequestBurst, l.MaxRuns, l.MaxStoredBytes = &rate, &burst, &maxRuns, &quota
	return l
}
