package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/bench"
)

// benchJSON runs carryon bench with --json and returns its report.
func benchJSON(t *testing.T, e env, args ...string) *bench.Report {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"bench", "--json"}, args...)
	if err := run(context.Background(), args, e, nil, &stdout, &stderr); err != nil {
		t.Fatalf("carryon %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the report is not JSON (%v):\n%s", err, stdout.String())
	}
	return &rep
}

// checkReport checks what every report of count operations without errors must hold.
func checkReport(t *testing.T, rep *bench.Report, scenario string, count, sessions, clients, history int) {
	t.Helper()
	if rep.Scenario != scenario || rep.Ops != count || rep.Errors != 0 || len(rep.ErrorsByCode) != 0 {
		t.Errorf("%s: scenario %q, %d ops, %d errors %v; want %d ops and no errors", scenario, rep.Scenario, rep.Ops, rep.Errors, rep.ErrorSamples, count)
	}
	if rep.Sessions != sessions || rep.Concurrency != clients || rep.History != history {
		t.Errorf("%s: %d sessions, %d clients, history %d; want %d, %d, %d", scenario, rep.Sessions, rep.Concurrency, rep.History, sessions, clients, history)
	}
	checkLatency(t, scenario, rep.Latency, count)
	if rep.Seconds <= 0 || rep.OpsPerSecond <= 0 || rep.StartedAt.IsZero() {
		t.Errorf("%s: %.3f s, %.1f ops/s, started %v", scenario, rep.Seconds, rep.OpsPerSecond, rep.StartedAt)
	}
	if rep.Memory.Source == "" || rep.Memory.PeakRSSBytes == 0 || rep.Memory.PeakHeapBytes == 0 {
		t.Errorf("%s: peak memory %+v", scenario, rep.Memory)
	}
	// A server's process_cpu_seconds_total counts in clock ticks (10 ms): a few operations may
	// cost less than one, so only the in-process figure must be positive here (TestBenchServer
	// checks a server's over more operations).
	if c := rep.CPU; c.Source != rep.Memory.Source || c.Seconds < 0 || c.PerOpMicros < 0 || (c.Source == "process" && (c.Seconds <= 0 || c.PerOpMicros <= 0)) {
		t.Errorf("%s: cpu %+v, want it measured where the memory is (%q) and positive", scenario, rep.CPU, rep.Memory.Source)
	}
	want := map[string][]string{bench.Turn: {"restore", "write"}, bench.Continue: {"restore", "context"}}[scenario]
	for _, p := range want {
		checkLatency(t, scenario+" "+p, rep.Phases[p], count)
	}
	if scenario == bench.Mixed {
		n := 0
		for _, kind := range []string{bench.Turn, bench.Append, bench.Continue, bench.RunScenario} {
			n += rep.Phases[kind].N
		}
		if n != count {
			t.Errorf("mixed: the kinds of operation add up to %d, want %d: %+v", n, count, rep.Phases)
		}
	}
}

// checkLatency checks that a set of n latencies has ordered, positive percentiles.
func checkLatency(t *testing.T, what string, l bench.Latency, n int) {
	t.Helper()
	if l.N != n || l.P50 <= 0 || l.P50 > l.P95 || l.P95 > l.P99 || l.P99 > l.Max || l.Mean <= 0 || l.Mean > l.Max {
		t.Errorf("%s: latencies %+v of %d operations", what, l, n)
	}
}

// checkPhysical checks the physical limit measured beside a scenario.
func checkPhysical(t *testing.T, rep *bench.Report, n int, method string) {
	t.Helper()
	p := rep.Physical
	if p == nil {
		t.Fatalf("%s: no physical limit", rep.Scenario)
	}
	if p.Ops != n || p.OpsPerSecond <= 0 || !strings.Contains(p.Method, method) || rep.RatioToPhysical <= 0 || rep.RatioToPhysicalP50 <= 0 {
		t.Errorf("%s: physical %+v, ratios %.2f %.2f", rep.Scenario, p, rep.RatioToPhysical, rep.RatioToPhysicalP50)
	}
	checkLatency(t, rep.Scenario+" physical", p.Latency, n)
}

// TestBenchEmbedded: every scenario runs its count on a hub opened in the process, on a SQLite
// file the test names, with the physical limit beside it; the sessions hold what was written.
func TestBenchEmbedded(t *testing.T) {
	t.Parallel()
	for _, sc := range bench.Scenarios {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "bench.db")
			rep := benchJSON(t, envMap(nil), "--embedded", "--db", db, "--scenario", sc, "--count", "8", "--concurrency", "2", "--sessions", "3", "--history", "5", "--physical", "4")
			checkReport(t, rep, sc, 8, 3, 2, 5)
			if rep.Target != "embedded" || rep.Store != "sqlite" || rep.Memory.Source != "process" || rep.DatabaseBytes == 0 {
				t.Errorf("target %q, store %q, memory %q, database %d bytes", rep.Target, rep.Store, rep.Memory.Source, rep.DatabaseBytes)
			}
			checkPhysical(t, rep, 4, "SQLite")
			if sc != bench.Continue && (rep.Writes <= 0 || rep.Syncs == 0 || rep.Syncs > uint64(rep.Writes) || rep.SyncsPerOp <= 0) {
				t.Errorf("%d writes, %d fsyncs (%.2f an op): want fsyncs, at most one a write", rep.Writes, rep.Syncs, rep.SyncsPerOp)
			}
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(db), "bench-physical-*")); len(m) != 0 {
				t.Errorf("the physical limit's file is left behind: %v", m)
			}
		})
	}
}

// TestBenchEmbeddedPostgres: the turn on PostgreSQL, beside a bare insert into the same database.
func TestBenchEmbeddedPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgDatabase(t)
	rep := benchJSON(t, envMap(nil), "--embedded", "--db", dsn, "--scenario", "turn", "--count", "6", "--history", "700", "--physical", "3")
	checkReport(t, rep, bench.Turn, 6, 1, 1, 700)
	if rep.Store != "postgres" {
		t.Errorf("store %q", rep.Store)
	}
	checkPhysical(t, rep, 3, "PostgreSQL")
}

// TestBenchServer: every scenario runs against a real server process with the local key in a
// named user (--user); that user's sessions hold the prefilled history plus what the scenario
// appended, and the memory comes from the server's /metrics. Without --user the bench works in
// a user of its own and removes it: the local user holds nothing, no bench user is left.
func TestBenchServer(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	e := envMap(map[string]string{"CARRYON_DATA": data})
	total := 0 // messages the sessions on the server must hold
	for _, sc := range bench.Scenarios {
		rep := benchJSON(t, e, "--url", srv.url, "--user", "loadtest", "--db", filepath.Join(data, "carryon.db"), "--scenario", sc, "--count", "6", "--concurrency", "2", "--history", "501", "--physical", "3")
		checkReport(t, rep, sc, 6, 2, 2, 501)
		if rep.User != "loadtest" || rep.UserRemoved {
			t.Errorf("%s: user %q, removed %v", sc, rep.User, rep.UserRemoved)
		}
		if rep.Target != srv.url || rep.Store != "sqlite" || rep.Memory.Source != "metrics" {
			t.Errorf("%s: target %q, store %q, memory %q", sc, rep.Target, rep.Store, rep.Memory.Source)
		}
		checkPhysical(t, rep, 3, "SQLite")
		total += 2 * 501
		switch sc {
		case bench.Turn:
			total += 6 * 2
		case bench.Append:
			total += 6
		case bench.RunScenario:
			total += 6 * 2 // the message and the scripted model's answer, at least
		}
	}
	var stored int
	loadtest := must(t, srv.url, key, "POST", "/v1/users/loadtest/keys", nil, 201).json(t)["secret"].(string)
	for _, it := range must(t, srv.url, loadtest, "GET", "/v1/sessions?limit=100", nil, 200).json(t)["items"].([]any) {
		stored += int(it.(map[string]any)["message_count"].(float64))
	}
	if stored < total {
		t.Errorf("the server holds %d messages, want at least %d", stored, total)
	}
	for _, k := range must(t, srv.url, key, "GET", "/v1/users/loadtest/keys", nil, 200).json(t)["items"].([]any) {
		if k := k.(map[string]any); k["revoked_at"] == nil && !strings.HasPrefix(loadtest, k["prefix"].(string)) {
			t.Errorf("a key the bench made is not revoked: %v", k)
		}
	}
	// The text report says the same things for a person.
	var out bytes.Buffer
	if err := run(context.Background(), []string{"bench", "--url", srv.url, "--key", key, "--count", "300"}, envMap(nil), nil, &out, &out); err != nil {
		t.Fatalf("carryon bench: %v\n%s", err, out.String())
	}
	if m := regexp.MustCompile(`cpu \(metrics\): ([0-9.]+) s, ([0-9.]+) µs an op`).FindStringSubmatch(out.String()); m == nil || m[1] == "0.000" || m[2] == "0.0" {
		t.Errorf("300 turns: the server's cpu is not reported, or not positive:\n%s", out.String())
	}
	for _, want := range []string{"carryon bench turn on " + srv.url, "wrote to user bench-", "(made for the run and removed at its end)", "300 ops in", "0 errors", "p99 ms", "restore", "peak memory (metrics)", "cpu (metrics): ", "µs an op"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, out.String())
		}
	}
	if items := must(t, srv.url, key, "GET", "/v1/sessions", nil, 200).json(t)["items"].([]any); len(items) != 0 {
		t.Errorf("the local user holds %d sessions after the bench", len(items))
	}
	for _, u := range must(t, srv.url, key, "GET", "/v1/users", nil, 200).json(t)["items"].([]any) {
		if name := u.(map[string]any)["name"].(string); strings.HasPrefix(name, "bench-") {
			t.Errorf("user %s is left after the bench", name)
		}
	}
}

// TestBenchUsage: a command line the bench cannot run is a usage error, and nothing runs.
func TestBenchUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"bench"},
		{"bench", "--embedded", "--url", "http://127.0.0.1:1"},
		{"bench", "--embedded", "--scenario", "nope"},
		{"bench", "--embedded", "--concurrency", "4", "--sessions", "2"},
		{"bench", "--embedded", "--count", "-1"},
		{"bench", "--embedded", "--physical", "-1"},
		{"bench", "--embedded", "--db", "mysql://x"},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), args, envMap(nil), nil, &out, &out); !isUsage(err) {
			t.Errorf("carryon %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// TestBenchStreams: the clients work while event streams of a run that lasts are held open, and
// the bench ends (the streams closed, the run cancelled) when they are done.
func TestBenchStreams(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data, "--scripted-delay", "1h")
	rep := benchJSON(t, envMap(map[string]string{"CARRYON_DATA": data}), "--url", srv.url, "--user", "streams", "--scenario", "append", "--count", "4", "--streams", "5")
	checkReport(t, rep, bench.Append, 4, 1, 1, 10)
	if rep.Streams != 5 || rep.Physical != nil {
		t.Errorf("streams %d, physical %+v (no --db: none)", rep.Streams, rep.Physical)
	}
	key := must(t, srv.url, localKey(t, data), "POST", "/v1/users/streams/keys", nil, 201).json(t)["secret"].(string)
	var runs []string
	for _, it := range must(t, srv.url, key, "GET", "/v1/sessions?limit=100", nil, 200).json(t)["items"].([]any) {
		id := it.(map[string]any)["id"].(string)
		for _, r := range must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/runs", nil, 200).json(t)["items"].([]any) {
			runs = append(runs, r.(map[string]any)["id"].(string))
		}
	}
	for _, id := range runs { // a cancelled run stops at its next step: poll for it
		deadline := time.Now().Add(30 * time.Second)
		for st := ""; st != "cancelled"; {
			st, _ = must(t, srv.url, key, "GET", "/v1/runs/"+id, nil, 200).json(t)["status"].(string)
			if time.Now().After(deadline) {
				t.Fatalf("the streams' run is %s after the bench, want cancelled", st)
			}
		}
	}
	if len(runs) != 1 {
		t.Errorf("%d runs, want the streams' one", len(runs))
	}
}

// TestBenchCPUProfile: --cpu-profile writes a pprof profile (gzipped protobuf) of the
// measurement in process; with --url it is a usage error (the server takes its own).
func TestBenchCPUProfile(t *testing.T) {
	t.Parallel()
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	rep := benchJSON(t, envMap(nil), "--embedded", "--scenario", "append", "--count", "50", "--physical", "0", "--cpu-profile", prof)
	checkReport(t, rep, bench.Append, 50, 1, 1, 10)
	if b, err := os.ReadFile(prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("the profile: %v, %d bytes", err, len(b))
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"bench", "--url", "http://127.0.0.1:1", "--cpu-profile", prof}, envMap(nil), nil, &out, &out); !isUsage(err) {
		t.Errorf("--cpu-profile with --url: %v, want a usage error", err)
	}
}
