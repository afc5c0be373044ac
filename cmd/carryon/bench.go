package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/bench"
	"github.com/carryon-hub/carryon/internal/dbopen"
	"github.com/carryon-hub/carryon/internal/users"
)

const benchUsage = `usage: carryon bench (--embedded [--db DSN] | --url URL [--key KEY] [--user NAME] [--db DSN]) [flags]
  A load generator. It makes --sessions sessions of --history messages each, then --concurrency
  clients (each on sessions of its own) run the scenario --count times in all, or for
  --duration, and it reports the throughput, the latency percentiles, the errors and the peak
  memory of the process serving them (text, or --json).
  Scenarios: turn (restore the session, then one write: a user and an assistant message with
  goal and next_action set in the working memory, with the version read and a request id),
  append (one message with a request id), continue (restore and build the model's context),
  run (a full run on the server's model, the offline scripted one by default), mixed (40% turn,
  30% append, 20% continue, 10% run).
  --embedded opens carryon in this process on --db (a SQLite file or a postgres:// URL; default
  a new temporary directory, removed afterwards; CARRYON_DB counts as --db, so unset it to keep
  the bench out of a real database) for a user of its own; --url drives a running
  server with --key (default the local key file of --data) and reads its memory from /metrics.
  With an admin key it works in a user of its own, bench-<random>, made for the run and
  forgotten (every session and key of it) at its end; with --user NAME in that user (made when
  it does not exist) and keeps what it wrote, through a key made for the run and revoked after;
  a key that is not an admin's works in its own user and keeps what it wrote. The report says
  which.
  Beside the scenario it measures the physical limit of the database: --physical bare
  single-row INSERTs, each its own fsync'd commit (for a server, only when --db names its
  database). A terminal gets a progress bar.

Examples:
  carryon bench --embedded --scenario turn --history 10000 --count 2000
  carryon bench --embedded --db postgres://postgres@127.0.0.1:5432/bench --scenario append --concurrency 16 --duration 20s
  carryon bench --url http://127.0.0.1:8420 --key ck_... --scenario append --concurrency 64 --duration 30s --json
  carryon bench --url http://127.0.0.1:8420 --scenario continue --sessions 100000 --history 0 --streams 1000 --count 2000`

// benchFlags are the flags of carryon bench.
type benchFlags struct {
	embedded             bool
	url, key, data, db   string
	user                 string
	synchronous          string
	scenario             string
	sessions, clients    int
	count, history, phys int
	streams, toolCalls   int
	duration             time.Duration
	asJSON               bool
	cpuProfile           string
}

func runBench(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", benchUsage, stdout)
	var f benchFlags
	fs.BoolVar(&f.embedded, "embedded", false, "open carryon in this process instead of driving a server")
	fs.StringVar(&f.url, "url", "", "the server to drive, such as http://127.0.0.1:8420")
	fs.StringVar(&f.key, "key", "", "API key of the server; default the local key file in --data")
	fs.StringVar(&f.data, "data", defaultDataDir(getenv), "data directory of a local server, for its key file (with --url)")
	fs.StringVar(&f.user, "user", "", "with --url and an admin key: the user to work in, kept afterwards (default a user of the bench's own, removed afterwards)")
	fs.StringVar(&f.db, "db", "", "database: a SQLite file path or a postgres:// URL; with --embedded the one to open (default a temporary directory's), with --url the server's, for the physical limit")
	fs.StringVar(&f.synchronous, "sqlite-synchronous", "FULL", "SQLite durability of the embedded store and the physical limit: FULL or NORMAL")
	fs.StringVar(&f.scenario, "scenario", bench.Turn, "turn, append, continue, run or mixed")
	fs.IntVar(&f.sessions, "sessions", 0, "sessions to make; default one per client")
	fs.IntVar(&f.clients, "concurrency", 1, "clients working at once")
	fs.IntVar(&f.count, "count", 0, "operations in all; default: as many as --duration allows")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "how long the clients work, unless --count")
	fs.IntVar(&f.history, "history", 10, "messages in each session before the first operation")
	fs.IntVar(&f.phys, "physical", 500, "bare single-row INSERTs measured beside the scenario (half before the clients start, half after); 0 measures none")
	fs.IntVar(&f.streams, "streams", 0, "run event streams to hold open while the clients work; they follow one run, so give the server a --scripted-delay (and a --model-first-byte-timeout longer than it)")
	fs.IntVar(&f.toolCalls, "tool-calls", 0, "the run scenario: tool calls (list_files) each run's message asks the scripted model for in its first step, before its answer in the second")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fs.StringVar(&f.cpuProfile, "cpu-profile", "", "with --embedded: write a CPU profile (pprof) of the measurement, the clients and the hub, to this file")
	if pos, err := fs.parse(getenv, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fs.misuse()
	}
	if f.embedded == (f.url != "") {
		return usagef("give either --embedded or --url (\"carryon bench --help\" shows examples)")
	}
	if f.sessions == 0 {
		f.sessions = max(f.clients, 1)
	}
	if f.count > 0 {
		f.duration = 0
	}
	if f.phys < 0 {
		return usagef("--physical must be 0 or more")
	}
	if f.db != "" {
		sf := storeFlags{db: f.db}
		if _, err := sf.dsn(); err != nil {
			return err
		}
	}
	cfg := bench.Config{Scenario: f.scenario, Sessions: f.sessions, Concurrency: f.clients, Count: f.count, Duration: f.duration, History: f.history, Streams: f.streams,
		RunMessage: "continue the task" + strings.Repeat("\n/tool list_files {}", max(f.toolCalls, 0))}
	if err := cfg.Check(); err != nil {
		return usagef("%v", err)
	}
	if f.cpuProfile != "" {
		if !f.embedded {
			return usagef("--cpu-profile profiles this process: give it with --embedded (a server takes its own --cpu-profile)")
		}
		cfg.Profile = func() (func(), error) { return startCPUProfile(f.cpuProfile) }
	}
	if file, ok := stdout.(*os.File); ok && isTerminal(file) {
		progress, done := bench.Bar(stdout)
		defer done()
		cfg.Progress = progress
		stdout = clearing{stdout, done}
	}
	var rep *bench.Report
	var err error
	if f.embedded {
		rep, err = benchEmbedded(ctx, f, cfg, getenv)
	} else {
		rep, err = benchRemote(ctx, f, cfg)
	}
	if err != nil {
		return err
	}
	if f.asJSON {
		return printJSON(stdout, rep)
	}
	return rep.WriteText(stdout)
}

// benchEmbedded runs the benchmark on a hub opened in this process.
func benchEmbedded(ctx context.Context, f benchFlags, cfg bench.Config, getenv env) (*bench.Report, error) {
	data, err := os.MkdirTemp("", "carryon-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(data)
	dsn := f.db
	if dsn == "" {
		dsn = filepath.Join(data, "carryon.db")
	}
	db, err := dbopen.Open(ctx, data, dsn, 0, f.synchronous)
	if err != nil {
		return nil, err
	}
	var writes atomic.Int64
	h, err := app.Open(ctx, app.Options{Data: data, Store: db, Getenv: getenv,
		Instrument: func(kind string, _ time.Duration, err error) {
			if kind == "write" && err == nil {
				writes.Add(1)
			}
		}})
	if err != nil {
		return nil, err
	}
	defer h.Close()
	u, _, err := h.Users.CreateUser(carryon.NewTrustedContext(ctx), carryon.NewUser{Name: fmt.Sprintf("bench-%d", time.Now().UnixNano())})
	if err != nil {
		return nil, err
	}
	as := carryon.NewContextWithUser(ctx, u)
	cfg.Physical = bench.PhysicalConfig{DSN: dsn, Synchronous: f.synchronous, N: f.phys}
	t := bench.Target{
		Sessions: h.Sessions, Runs: h.Runs, Memory: bench.Self, CPU: bench.SelfCPU, CPUSource: "process",
		Context: func(ctx context.Context, id string) error { _, err := h.Preview(ctx, id); return err },
		Writes:  func(context.Context) (int64, error) { return writes.Load(), nil },
	}
	if s, ok := db.(interface{ CommitSyncs() uint64 }); ok && f.synchronous == "FULL" {
		t.Syncs = s.CommitSyncs
	}
	rep, err := bench.Run(as, cfg, t)
	if err != nil {
		return nil, err
	}
	rep.Target, rep.Store, rep.DatabaseBytes = "embedded", storeKind(dsn), sqliteBytes(dsn)
	return rep, nil
}

// benchRemote runs the benchmark against a server.
func benchRemote(ctx context.Context, f benchFlags, cfg bench.Config) (_ *bench.Report, err error) {
	key := f.key
	if key == "" {
		k, err := users.ReadLocalKey(f.data)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no API key: pass --key or CARRYON_KEY, or point --data at a local server's data directory (no %s/%s)", f.data, users.LocalKeyFile)
		} else if err != nil {
			return nil, err
		}
		key = k
	}
	base := strings.TrimRight(f.url, "/")
	hc := &http.Client{Transport: http.DefaultTransport}
	if tr, ok := http.DefaultTransport.(*http.Transport); ok {
		tr = tr.Clone()
		tr.MaxIdleConnsPerHost = cfg.Concurrency + 4 // one kept-alive connection per client
		hc.Transport = tr
	}
	caller := client.New(base, key, client.WithHTTPClient(hc))
	bu, err := openBenchUser(ctx, caller, key, f.user)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", base, err)
	}
	c := client.New(base, bu.secret, client.WithHTTPClient(hc))
	defer func() {
		if cerr := bu.close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if f.db != "" {
		cfg.Physical = bench.PhysicalConfig{DSN: f.db, Synchronous: f.synchronous, N: f.phys}
	}
	rep, err := bench.Run(ctx, cfg, bench.Target{
		Sessions: c, Runs: c, Memory: scrapeMemory(hc, base), MemoryEvery: time.Second, Writes: scrapeWrites(hc, base),
		CPU: scrapeCPU(hc, base), CPUSource: "metrics",
		Context: func(ctx context.Context, id string) error { _, err := c.Context(ctx, id); return err },
	})
	if err != nil {
		return nil, err
	}
	rep.Target, rep.User, rep.UserRemoved = base, bu.name, bu.remove
	if f.db != "" {
		rep.Store, rep.DatabaseBytes = storeKind(f.db), sqliteBytes(f.db)
	}
	return rep, nil
}

// sqliteBytes is the size of a SQLite database file and its WAL, 0 for PostgreSQL.
func sqliteBytes(dsn string) int64 {
	if dbopen.IsPostgres(dsn) {
		return 0
	}
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(strings.TrimPrefix(dsn, "sqlite://") + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func storeKind(dsn string) string {
	if dbopen.IsPostgres(dsn) {
		return "postgres"
	}
	return "sqlite"
}

// clearing is a writer that clears the progress bar before its first write.
type clearing struct {
	w     io.Writer
	clear func()
}

func (c clearing) Write(p []byte) (int, error) { c.clear(); return c.w.Write(p) }

// scrapeMemory samples a server's memory from its Prometheus /metrics (baseURL without the path):
// process_resident_memory_bytes and go_memstats_heap_alloc_bytes, when it exports them.
func scrapeMemory(hc *http.Client, baseURL string) func(context.Context) (bench.Memory, error) {
	return func(ctx context.Context) (bench.Memory, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimRight(baseURL, "/")+"/metrics", nil)
		if err != nil {
			return bench.Memory{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return bench.Memory{}, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return bench.Memory{}, fmt.Errorf("GET /metrics: %s", resp.Status)
		}
		m := bench.Memory{Source: "metrics"}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			name, value, ok := strings.Cut(sc.Text(), " ")
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				continue
			}
			switch name {
			case "process_resident_memory_bytes":
				m.PeakRSSBytes = uint64(v)
			case "go_memstats_heap_alloc_bytes":
				m.PeakHeapBytes = uint64(v)
			}
		}
		if m.PeakRSSBytes == 0 && m.PeakHeapBytes == 0 {
			return bench.Memory{}, fmt.Errorf("the server's /metrics exports no memory figures")
		}
		return m, sc.Err()
	}
}

// scrapeWrites reads how many write transactions a server's store committed from its /metrics
// (the count of carryon_store_tx_duration_seconds with kind write and outcome ok).
func scrapeWrites(hc *http.Client, baseURL string) func(context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimRight(baseURL, "/")+"/metrics", nil)
		if err != nil {
			return 0, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			name, value, ok := strings.Cut(sc.Text(), " ")
			if ok && strings.HasPrefix(name, "carryon_store_tx_duration_seconds_count{") &&
				strings.Contains(name, `kind="write"`) && strings.Contains(name, `outcome="ok"`) {
				v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
				return int64(v), err
			}
		}
		if err := sc.Err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("the server's /metrics counts no store writes")
	}
}

// scrapeCPU reads the processor time a server has used from its /metrics
// (process_cpu_seconds_total, user and system time, which Prometheus's process collector reads
// from /proc at each scrape).
func scrapeCPU(hc *http.Client, baseURL string) func(context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimRight(baseURL, "/")+"/metrics", nil)
		if err != nil {
			return 0, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if value, ok := strings.CutPrefix(sc.Text(), "process_cpu_seconds_total "); ok {
				v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
				return time.Duration(v * float64(time.Second)), err
			}
		}
		if err := sc.Err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("the server's /metrics exports no process_cpu_seconds_total")
	}
}
