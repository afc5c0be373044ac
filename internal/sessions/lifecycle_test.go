package sessions_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	_ "modernc.org/sqlite"
)

func TestCloseRestore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	f.append(t, f.alice, s.ID, "kept")
	c, err := f.svc.Close(f.alice, s.ID, carryon.WriteOptions{})
	if err != nil || c.Status != carryon.SessionClosed {
		t.Fatalf("close: %v %+v", err, c)
	}
	_, err = f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "x"}}})
	wantCode(t, err, carryon.ECLOSED)
	v, err := f.svc.Get(f.alice, s.ID, carryon.GetOptions{})
	if err != nil || !reflect.DeepEqual(texts(v.Messages), []string{"kept"}) {
		t.Fatalf("history after close: %v %v", err, v)
	}
	if _, err := f.svc.Restore(f.alice, s.ID, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.append(t, f.alice, s.ID, "again")
}

func TestExpiryAndPurge(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	f.append(t, f.alice, s.ID, "morning")
	if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"g"}`)}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Hour + time.Second) // past the idle TTL
	_, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "late"}}})
	wantCode(t, err, carryon.EEXPIRED)
	_, err = f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"h"}`)})
	wantCode(t, err, carryon.EEXPIRED)
	v, err := f.svc.Get(f.alice, s.ID, carryon.GetOptions{})
	if err != nil || v.Status != carryon.SessionExpired || v.WorkingMemory.Goal() != "g" || len(v.Messages) != 1 {
		t.Fatalf("read of an expired session: %v %+v", err, v)
	}
	page, err := f.svc.List(f.alice, carryon.SessionFilter{Status: carryon.SessionExpired})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("list expired: %v %+v", err, page)
	}
	r, err := f.svc.Restore(f.alice, s.ID, carryon.WriteOptions{})
	if err != nil || r.Status != carryon.SessionActive {
		t.Fatalf("restore: %v %+v", err, r)
	}
	f.append(t, f.alice, s.ID, "revived")

	// A second session expires and passes the purge horizon; the sweeper deletes all of it.
	gone := f.create(t, f.alice)
	f.append(t, f.alice, gone.ID, "a", "b")
	if _, err := f.svc.PatchWorkingMemory(f.alice, gone.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"g"}`), WriteOptions: carryon.WriteOptions{RequestID: "k"}}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(50 * time.Minute)
	if _, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "keeps the first one alive"}}, WriteOptions: carryon.WriteOptions{RequestID: "k2"}}); err != nil {
		t.Fatal(err)
	} // k2 expires with the TTL; k goes with its session
	f.clock.Add(25 * time.Hour)
	res, err := f.svc.Sweep(f.alice)
	if err != nil || res.Sessions != 1 || res.RequestIDs != 1 {
		t.Fatalf("sweep = %+v, %v; want 1 session (the other is just inside the horizon) and 1 request id", res, err)
	}
	if _, err := f.svc.Get(f.alice, s.ID, carryon.GetOptions{}); err != nil {
		t.Fatalf("the session inside the horizon was purged: %v", err)
	}
	_, err = f.svc.Get(f.alice, gone.ID, carryon.GetOptions{})
	wantCode(t, err, carryon.ENOTFOUND)
	db, err := sql.Open("sqlite", f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%session_id%'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		rows.Scan(&name)
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 2 {
		t.Fatalf("found only tables %v with a session_id column", tables)
	}
	for _, table := range append(tables, "sessions") {
		col := "session_id"
		if table == "sessions" {
			col = "id"
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM `+table+` WHERE `+col+` = ?`, gone.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("table %s still holds %d rows of purged sessions", table, n)
		}
	}
}

func TestForkCopyOnWrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	f.append(t, f.alice, s.ID, "a", "b") // v2
	if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"old"}`)}); err != nil {
		t.Fatal(err)
	} // v3
	f.append(t, f.alice, s.ID, "c") // v4
	if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"new"}`)}); err != nil {
		t.Fatal(err)
	} // v5
	fk, err := f.svc.Fork(f.alice, s.ID, carryon.ForkInput{AtVersion: 3})
	if err != nil {
		t.Fatal(err)
	}
	f.append(t, f.alice, fk.ID, "fork-only")
	f.append(t, f.alice, s.ID, "parent-only")
	v, _ := f.svc.Get(f.alice, fk.ID, carryon.GetOptions{})
	if got := texts(v.Messages); !reflect.DeepEqual(got, []string{"a", "b", "fork-only"}) || v.WorkingMemory.Goal() != "old" || v.ParentID != s.ID {
		t.Fatalf("fork view: %v goal %q", got, v.WorkingMemory.Goal())
	}
	p, _ := f.svc.Get(f.alice, s.ID, carryon.GetOptions{})
	if got := texts(p.Messages); !reflect.DeepEqual(got, []string{"a", "b", "c", "parent-only"}) {
		t.Fatalf("parent view: %v", got)
	}
	_, err = f.svc.Fork(f.alice, s.ID, carryon.ForkInput{AtVersion: 99})
	wantCode(t, err, carryon.EINVALID)
	_, err = f.svc.Fork(f.bob, s.ID, carryon.ForkInput{})
	wantCode(t, err, carryon.ENOTFOUND)
	// Deleting the parent leaves the fork whole.
	if err := f.svc.Delete(f.alice, s.ID, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	v, err = f.svc.Get(f.alice, fk.ID, carryon.GetOptions{})
	if err != nil || !reflect.DeepEqual(texts(v.Messages), []string{"a", "b", "fork-only"}) {
		t.Fatalf("fork after parent delete: %v %v", err, v)
	}
}

func TestWorkingMemoryHistoryAndDiff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	for _, p := range []string{
		`{"goal":"ship","plan":[{"title":"a","status":"todo"}],"notes":{"x":1}}`,
		`{"next_action":"write tests","notes":{"x":2,"y":true}}`,
		`{"goal":null,"notes":{"x":null}}`,
	} {
		if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(p)}); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := f.svc.GetWorkingMemory(f.alice, s.ID)
	want := carryon.WorkingMemory{"plan": []any{map[string]any{"title": "a", "status": "todo"}}, "next_action": "write tests", "notes": map[string]any{"y": true}}
	if !reflect.DeepEqual(m.WorkingMemory, want) || m.WorkingMemoryVersion != 3 || m.Version != 4 {
		t.Fatalf("memory = %+v", m)
	}
	h, err := f.svc.WorkingMemoryHistory(f.alice, s.ID, carryon.RevisionFilter{Limit: 2})
	if err != nil || len(h.Items) != 2 || h.Items[0].WorkingMemoryVersion != 3 || h.NextCursor != "2" {
		t.Fatalf("history: %v %+v", err, h)
	}
	d, err := f.svc.WorkingMemoryDiff(f.alice, s.ID, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := []carryon.WorkingMemoryEdit{
		{Path: "/goal", Op: "removed", Old: "ship"},
		{Path: "/next_action", Op: "added", New: "write tests"},
		{Path: "/notes/x", Op: "removed", Old: json.Number("1")},
		{Path: "/notes/y", Op: "added", New: true},
	}
	if !reflect.DeepEqual(d.Changes, wantDiff) {
		t.Fatalf("diff = %+v", d.Changes)
	}
	_, err = f.svc.WorkingMemoryDiff(f.alice, s.ID, 0, 9)
	wantCode(t, err, carryon.EINVALID)
	// A patch that changes nothing writes nothing.
	m2, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"next_action":"write tests"}`)})
	if err != nil || m2.Version != m.Version {
		t.Fatalf("no-op patch: %v %+v", err, m2)
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	bad := []carryon.AppendInput{
		{},
		{Messages: []carryon.NewMessage{{Role: "robot", Content: "x"}}},
		{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: ""}}},
		{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "\xff"}}},
		{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "x", Kind: "other"}}},
		{Messages: []carryon.NewMessage{{Role: carryon.RoleAssistant, Content: "x", ToolCalls: json.RawMessage(`{}`)}}},
		{Messages: []carryon.NewMessage{{Role: carryon.RoleAssistant, Content: "s", Kind: carryon.KindSummary, CoversFrom: 1, CoversTo: 5}}},
	}
	for i, in := range bad {
		_, err := f.svc.AppendMessages(f.alice, s.ID, in)
		if carryon.ErrorCode(err) != carryon.EINVALID {
			t.Errorf("case %d: %v, want invalid_request", i, err)
		}
	}
	for _, p := range []string{`[]`, `"x"`, `null`, `{`} {
		_, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(p)})
		wantCode(t, err, carryon.EINVALID)
	}
	_, err := f.svc.AppendMessages(f.alice, "sess_missing", carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "x"}}})
	wantCode(t, err, carryon.ENOTFOUND)
	v, _ := f.svc.Get(f.alice, s.ID, carryon.GetOptions{})
	if v.Version != 1 {
		t.Fatalf("version moved to %d", v.Version)
	}
}

func TestListPaging(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var ids []string
	for range 5 {
		ids = append(ids, f.create(t, f.alice).ID)
		f.clock.Add(time.Second)
	}
	f.create(t, f.bob)
	var got []string
	cursor := ""
	for {
		p, err := f.svc.List(f.alice, carryon.SessionFilter{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Items {
			got = append(got, s.ID)
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	want := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pages = %v, want %v", got, want)
	}
	_, err := f.svc.List(f.alice, carryon.SessionFilter{Cursor: "garbage"})
	wantCode(t, err, carryon.EINVALID)
}

// A revision stores what its patch changed: members that set the value a key has already are
// dropped, and every revision still reads back (replayed from the snapshot before it) and diffs
// as the documents the patches made.
func TestRevisionStoresEffectivePatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	patches := []string{`{"goal":"ship","notes":{"x":1,"y":[1,2]},"gone":"z"}`}
	wantStored := []string{`{"goal":"ship","gone":"z","notes":{"x":1,"y":[1,2]}}`}
	for i := range 20 {
		patches = append(patches, fmt.Sprintf(`{"goal":"ship","notes":{"x":1,"y":[1,2],"n":%d},"gone":null,"never":null}`, i))
		if i == 0 {
			wantStored = append(wantStored, `{"gone":null,"notes":{"n":0}}`)
		} else {
			wantStored = append(wantStored, fmt.Sprintf(`{"notes":{"n":%d}}`, i))
		}
	}
	for _, p := range patches {
		if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(p)}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := f.svc.WorkingMemoryHistory(f.alice, s.ID, carryon.RevisionFilter{Limit: 100})
	if err != nil || len(h.Items) != len(patches) {
		t.Fatalf("history: %v %d items", err, len(h.Items))
	}
	doc := carryon.WorkingMemory{}
	for i, p := range patches {
		next, err := sessions.PreviewWorkingMemory(doc, json.RawMessage(p))
		if err != nil {
			t.Fatal(err)
		}
		doc = next
		rev := h.Items[len(patches)-1-i]
		if string(rev.Patch) != wantStored[i] {
			t.Errorf("revision %d stores %s, want %s", rev.WorkingMemoryVersion, rev.Patch, wantStored[i])
		}
		if got, want := mustMarshal(t, rev.Document), mustMarshal(t, doc); got != want {
			t.Errorf("revision %d reads %s, want %s", rev.WorkingMemoryVersion, got, want)
		}
	}
	d, err := f.svc.WorkingMemoryDiff(f.alice, s.ID, 1, 21)
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := []carryon.WorkingMemoryEdit{
		{Path: "/gone", Op: "removed", Old: "z"},
		{Path: "/notes/n", Op: "added", New: json.Number("19")},
	}
	if !reflect.DeepEqual(d.Changes, wantDiff) {
		t.Fatalf("diff = %+v", d.Changes)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
