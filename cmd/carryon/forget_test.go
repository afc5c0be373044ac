package main

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestForgetUserUnderLoad: forgetting a user on SQLite while another user writes.
func TestForgetUserUnderLoad(t *testing.T) {
	t.Parallel()
	testForgetUnderLoad(t, "")
}

// TestForgetUserUnderLoadPostgres: the same on PostgreSQL.
func TestForgetUserUnderLoadPostgres(t *testing.T) {
	t.Parallel()
	testForgetUnderLoad(t, pgDatabase(t))
}

// forgetMarker is in everything the forgotten user writes, so that a scan finds any copy left.
const forgetMarker = "zebrasecret"

// testForgetUnderLoad gives a user everything a user can own (sessions with hundreds of
// messages, a fork, a tombstone, working memory, a run with its tool journal, events and
// workspace files, long-term memory, request ids, keys), then forgets them with DELETE
// /v1/users/{id} while another user appends without pause (and some of those appends are
// answered between the forget's steps). The server is killed (failpoint forget-step) in the
// middle of the forget; after the restart the forget continues (the call
// or the sweeper) and finishes once, with one audit line whose counts match what carryon stats
// counted before. Then every id of the user answers 404 (its key 401), a scan of every table of
// the schema and of the workspaces directory finds nothing of theirs, and the other user's
// writes are all there.
func testForgetUnderLoad(t *testing.T, dsn string) {
	data := t.TempDir()
	var db []string
	if dsn != "" {
		db = []string{"--db", dsn}
	}
	srv := startServerEnv(t, data, []string{"CARRYON_FAILPOINT=forget-step@10"}, db...)
	admin := localKey(t, data)
	newUser := func(name string) (string, string) {
		u := must(t, srv.url, admin, "POST", "/v1/users", map[string]any{"name": name}, 201).json(t)
		return u["user"].(map[string]any)["id"].(string), u["key"].(string)
	}
	bobID, bobKey := newUser("bobforget")
	_, aliceKey := newUser("alice")
	must(t, srv.url, admin, "POST", "/v1/users/bobforget/keys", nil, 201)

	// Bob's sessions hold 2,000 messages each, so forgetting them takes many steps (at most 500
	// rows each) and alice's appends land between them.
	const appends = 40
	ids := []string{bobID} // every id of bob's that must answer 404 afterwards
	var bobSessions []string
	for i := range 3 {
		sid := must(t, srv.url, bobKey, "POST", "/v1/sessions", map[string]any{"title": forgetMarker}, 201).json(t)["id"].(string)
		bobSessions = append(bobSessions, sid)
		for j := range appends {
			msgs := make([]map[string]any, 50)
			for k := range msgs {
				msgs[k] = map[string]any{"role": "user", "content": fmt.Sprintf("%s %d %d %d", forgetMarker, i, j, k)}
			}
			must(t, srv.url, bobKey, "POST", "/v1/sessions/"+sid+"/messages", map[string]any{"messages": msgs}, 201,
				fmt.Sprintf("Idempotency-Key: bob-%d-%d", i, j))
		}
	}
	must(t, srv.url, bobKey, "DELETE", "/v1/sessions/"+bobSessions[1]+"/messages/7", nil, 200)
	must(t, srv.url, bobKey, "PATCH", "/v1/sessions/"+bobSessions[2]+"/memory",
		map[string]any{"patch": map[string]any{"goal": forgetMarker}}, 200, "Idempotency-Key: bob-memory")
	runID := must(t, srv.url, bobKey, "POST", "/v1/sessions/"+bobSessions[0]+"/runs", map[string]any{"message": picnic + " " + forgetMarker}, 202).json(t)["id"].(string)
	if run := waitRun(t, srv, bobKey, runID); run["status"] != "succeeded" {
		t.Fatalf("bob's run = %v", run)
	}
	if _, err := os.Stat(filepath.Join(data, "workspaces", bobSessions[0], "PLAN.md")); err != nil {
		t.Fatalf("bob's run wrote no workspace file: %v", err)
	}
	fork := must(t, srv.url, bobKey, "POST", "/v1/sessions/"+bobSessions[0]+"/fork", map[string]any{}, 201).json(t)["id"].(string)
	bobSessions = append(bobSessions, fork)
	must(t, srv.url, bobKey, "PUT", "/v1/memories/notes/diary", map[string]any{"value": forgetMarker, "text": forgetMarker + " diary"}, 200,
		"Idempotency-Key: bob-ltm")
	must(t, srv.url, aliceKey, "PUT", "/v1/memories/notes/diary", map[string]any{"value": "hers", "text": "giraffe diary"}, 200)
	// A fact consolidated twice: its replaced value is kept as an earlier version, which goes too.
	must(t, srv.url, bobKey, "POST", "/v1/memories/facts", map[string]any{"text": forgetMarker + " fact"}, 200)
	if a := must(t, srv.url, bobKey, "POST", "/v1/memories/facts", map[string]any{"text": forgetMarker + "  Fact", "value": "changed"}, 200).json(t); a["supersedes"] == nil {
		t.Fatalf("the second add kept no earlier version: %v", a)
	}
	keys := must(t, srv.url, admin, "GET", "/v1/users/bobforget/keys", nil, 200).json(t)["items"].([]any)
	var keyIDs []string
	for _, k := range keys {
		keyIDs = append(keyIDs, k.(map[string]any)["id"].(string))
	}
	ids = append(append(append(ids, bobSessions...), runID), keyIDs...)

	// What carryon stats counts for bob is what the forget must delete.
	out, err := cliRun(context.Background(), srv, nil, nil, append([]string{"stats", "--json", "--data", data}, db...)...)
	if err != nil {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	var stats statsReport
	if err := json.Unmarshal([]byte(out), &stats); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	var want map[string]int64
	for _, u := range stats.Users {
		if u.UserID == bobID {
			want = map[string]int64{"sessions": u.Sessions, "messages": u.Messages, "runs": u.Runs, "actions": u.Actions,
				"events": u.Events, "long_term_items": u.LongTermItems, "request_ids": u.RequestIDs,
				"message_deletions": 1, "workspaces": 2, "keys": 2} // the fork has a copy of the workspace
		}
	}
	if want == nil || want["sessions"] != 4 || want["messages"] < 3*appends*50 || want["actions"] == 0 ||
		want["request_ids"] != 3*appends+2 {
		t.Fatalf("stats for bob: %+v (users %+v)", want, stats.Users)
	}

	// Alice appends without pause from now until the forget is over, across the crash: a failed
	// append is retried with its request id until it is answered, so each is stored once.
	alice := must(t, srv.url, aliceKey, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	var (
		url     atomic.Value
		acked   atomic.Int64
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		badSeen atomic.Value
	)
	url.Store(srv.url)
	wg.Go(func() {
		for i := 0; ; i++ {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := do(url.Load().(string), aliceKey, "POST", "/v1/sessions/"+alice+"/messages",
					appendBody(fmt.Sprintf("alice %d", i)), fmt.Sprintf("Idempotency-Key: alice-%d", i))
				if err == nil && r.status == 201 {
					acked.Add(1)
					break
				}
				if err == nil && r.status != 503 {
					badSeen.Store(fmt.Sprintf("alice's append %d: %d %s", i, r.status, r.body))
					return
				}
			}
		}
	})
	if !within(time.Minute, func() bool { return acked.Load() >= 20 }) {
		t.Fatalf("alice's writes did not get going: %v", badSeen.Load())
	}

	// The forget is cut off by the failpoint: the server dies under the call, after nine steps
	// between which alice's appends went on being answered.
	before := acked.Load()
	if r, err := do(srv.url, admin, "DELETE", "/v1/users/bobforget", nil); err == nil {
		t.Fatalf("the forget finished before the failpoint: %d %s", r.status, r.body)
	}
	during := acked.Load() - before
	t.Logf("%d appends of alice's were answered during the forget", during)
	if during == 0 {
		t.Fatalf("no append of alice's was answered while bob was being forgotten")
	}
	srv.kill()
	if logs := srv.logs.String(); !strings.Contains(logs, "failpoint forget-step") || strings.Contains(logs, "user forgotten") {
		t.Fatalf("the server did not die in the middle of the forget:\n%s", logs)
	}
	// Cut off, bob is already invisible and his keys are gone.
	srv2 := startServerEnv(t, data, nil, db...)
	url.Store(srv2.url)
	must(t, srv2.url, bobKey, "GET", "/v1/me", nil, 401)
	// The call continues the forget, unless the sweeper (which runs at the start) finished it first.
	r, err := do(srv2.url, admin, "DELETE", "/v1/users/"+bobID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !within(time.Minute, func() bool { return strings.Contains(srv2.logs.String(), "user forgotten") }) {
		t.Fatalf("the forget did not finish after the restart:\n%s", srv2.logs.String())
	}
	close(stop)
	wg.Wait()
	if e := badSeen.Load(); e != nil {
		t.Fatal(e)
	}
	audit := regexp.MustCompile(`msg="user forgotten".*`).FindAllString(srv2.logs.String(), -1)
	if len(audit) != 1 {
		t.Fatalf("%d audit lines, want 1:\n%s", len(audit), srv2.logs.String())
	}
	for kind, n := range want {
		if !strings.Contains(audit[0], fmt.Sprintf(" %s=%d", kind, n)) {
			t.Fatalf("audit line %q: want %s=%d", audit[0], kind, n)
		}
	}
	if !strings.Contains(audit[0], "user_id="+bobID) || strings.Contains(audit[0], "bobforget") {
		t.Fatalf("audit line %q: the id, not the name", audit[0])
	}
	if r.status == 200 {
		var receipt struct {
			Deleted map[string]int64 `json:"deleted"`
		}
		if err := json.Unmarshal(r.body, &receipt); err != nil {
			t.Fatal(err)
		}
		for kind, n := range want {
			if receipt.Deleted[kind] != n {
				t.Fatalf("receipt %s: %s = %d, want %d", r.body, kind, receipt.Deleted[kind], n)
			}
		}
	} else if r.status != 404 {
		t.Fatalf("DELETE after the restart = %d %s", r.status, r.body)
	}

	// Every id of bob's is a 404 now (his keys a 401), for an admin too.
	must(t, srv2.url, bobKey, "GET", "/v1/me", nil, 401)
	for _, path := range []string{"/v1/users/" + bobID, "/v1/users/bobforget", "/v1/users/bobforget/keys",
		"/v1/sessions/" + bobSessions[0], "/v1/sessions/" + fork, "/v1/runs/" + runID} {
		must(t, srv2.url, admin, "GET", path, nil, 404)
	}
	must(t, srv2.url, admin, "DELETE", "/v1/users/"+bobID, nil, 404)
	for _, k := range keyIDs {
		must(t, srv2.url, admin, "DELETE", "/v1/keys/"+k, nil, 404)
	}
	for _, u := range must(t, srv2.url, admin, "GET", "/v1/users", nil, 200).json(t)["items"].([]any) {
		if u.(map[string]any)["id"] == bobID {
			t.Fatalf("bob is still listed: %v", u)
		}
	}

	// Alice's writes are all there, in order, and her long-term memory answers.
	var page []any
	for {
		items := must(t, srv2.url, aliceKey, "GET", fmt.Sprintf("/v1/sessions/%s/messages?limit=1000&after_seq=%d", alice, len(page)),
			nil, 200).json(t)["items"].([]any)
		if len(items) == 0 {
			break
		}
		page = append(page, items...)
	}
	if int64(len(page)) != acked.Load() {
		t.Fatalf("alice has %d messages, %d were acknowledged", len(page), acked.Load())
	}
	for i, m := range page {
		if m.(map[string]any)["content"] != fmt.Sprintf("alice %d", i) {
			t.Fatalf("alice's message %d = %v", i, m)
		}
	}
	must(t, srv2.url, aliceKey, "GET", "/v1/memories/notes/diary", nil, 200)

	needles := append([]string{forgetMarker, "bobforget", fmt.Sprintf("%X", bobID), fmt.Sprintf("%x", bobID)}, ids...)
	if dsn == "" {
		scanSQLite(t, filepath.Join(data, "carryon.db"), needles)
	} else {
		scanPostgres(t, dsn, needles)
	}
	err = filepath.WalkDir(filepath.Join(data, "workspaces"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, n := range needles {
			if strings.Contains(d.Name(), n) {
				t.Errorf("workspace entry %s is bob's", path)
			}
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte(forgetMarker)) {
				t.Errorf("workspace file %s holds bob's text", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scanSQLite reads every row of every table in the schema (sqlite_schema: a table a later
// migration adds is scanned too; the full-text index's shadow tables included) and fails the
// test when a value holds one of needles.
func scanSQLite(t *testing.T, file string, needles []string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+file+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	if len(tables) < 10 {
		t.Fatalf("the schema lists %d tables: %v", len(tables), tables)
	}
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			checkRow(t, table, fmt.Sprint(vals...)+string(joinBytes(vals)), needles)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		rows.Close()
	}
}

// joinBytes concatenates the text and blob values of a row as they are stored.
func joinBytes(vals []any) []byte {
	var b []byte
	for _, v := range vals {
		switch x := v.(type) {
		case []byte:
			b = append(append(b, x...), 0)
			b = append(append(b, inflated(x)...), 0)
		case string:
			b = append(append(b, x...), 0)
		}
	}
	return b
}

// scanPostgres reads every row of every table of the database's schema (information_schema),
// each row as its text form, and fails the test when one holds one of needles.
func scanPostgres(t *testing.T, dsn string, needles []string) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 10 {
		t.Fatalf("the schema lists tables %v: %v", tables, err)
	}
	for _, table := range tables {
		rows, err := conn.Query(ctx, `SELECT x::text FROM `+pgx.Identifier{table}.Sanitize()+` AS x`)
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		for _, text := range texts {
			checkRow(t, table, text, needles)
		}
	}
	// A request id's stored answer may be compressed: its text form above shows the bytes.
	rows, err = conn.Query(ctx, `SELECT result FROM idempotency WHERE result IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	results, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		checkRow(t, "idempotency", string(inflated(r)), needles)
	}
}

// inflated is a stored request id answer as it reads: a compressed one (a 0x00 byte, then
// DEFLATE) expanded, any other value as it is.
func inflated(b []byte) []byte {
	if len(b) == 0 || b[0] != 0 {
		return b
	}
	out, err := io.ReadAll(flate.NewReader(bytes.NewReader(b[1:])))
	if err != nil {
		return b
	}
	return out
}

// checkRow fails the test when row holds one of needles.
func checkRow(t *testing.T, table, row string, needles []string) {
	t.Helper()
	for _, n := range needles {
		if strings.Contains(row, n) {
			t.Fatalf("table %s still holds %q: %.300s", table, n, row)
		}
	}
}
