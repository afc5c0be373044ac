// Package storetest is the conformance suite every store driver must pass, and benchmark helpers
// that show a driver's per-turn cost does not grow with history. A driver's tests call Run with a
// function that opens a fresh, empty, migrated store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { … })
//	}
//
// The suite checks behaviour through the store.Store interface only, so it holds for every driver;
// it never looks at tables or SQL. Beyond the interface's doc comments it pins these conventions:
//
//   - Messages read through a fork (LastMessages, MessagesAfter) carry the fork's id as SessionID,
//     inherited ones included, so a fork reads the same before and after its parent is deleted.
//   - A fork's versions are its own (the hub creates a fork at version 1): SeqAtVersion compares
//     only the fork's own messages (seq > ForkSeq) with the version and answers ForkSeq when none
//     qualifies, since everything inherited exists from the fork's first version on.
//   - After DeleteSession of a parent, its forks no longer name it as ParentID (ForkSeq stays).
//   - Write transactions are serialised: read-check-write inside Write never fails with a
//     conflict because of another writer (see Concurrency/SerialisedWrites).
//   - UpdateRun is conditional on the id, r.OwnerID and exactly prevAttempt: a foreign run is
//     ENOTFOUND like a missing one, any other attempt (older or newer) is EFENCED.
//   - Reads of a session's runs or actions (ListRuns, ActiveRuns, RecentActions) are ENOTFOUND when
//     the session is not the owner's; reads and writes of a run's rows (GetRun, ListActions,
//     EventsAfter, InsertAction, UpdateAction, AppendEvent) when the run is not (missing or
//     another owner's), and InsertAction also when the run is not of the action's session.
//   - RunnableRuns orders by (CreatedAt, ID); a lease expiring exactly at now has not expired,
//     and a running run without a lease expiry is never returned.
//   - A session's Agent is stored by InsertSession and kept by UpdateSession (a session stays
//     bound to its profile); a run's Agent is stored by InsertRun, and UpdateRun stores its Model
//     and AgentDigest (a runner records the definition it runs with).
//   - RecentActions breaks ties of StartedAt by step, then index, descending.
//   - A limit of zero or less means no limit (RunnableRuns, RecentActions, EventsAfter, ListRuns).
//   - Event seqs of a run are 1, 2, 3, … with no gap, also when a transaction that appended was
//     rolled back and when writers append concurrently (Runs/EventsConcurrent).
//   - A Write given the context of a write's fn (or one derived from it) on the same store is
//     EINTERNAL at once, wherever it runs (NestedWrites).
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Run runs the whole conformance suite, its groups in parallel. open must return a fresh, empty,
// migrated store on every call (so that no two tests share rows) and register its cleanup with
// t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Users", func(t *testing.T) { t.Parallel(); testUsers(t, open) })
	t.Run("Sessions", func(t *testing.T) { t.Parallel(); testSessions(t, open) })
	t.Run("Messages", func(t *testing.T) { t.Parallel(); testMessages(t, open) })
	t.Run("WorkingMemory", func(t *testing.T) { t.Parallel(); testWorkingMemory(t, open) })
	t.Run("WorkingMemoryHistory", func(t *testing.T) { t.Parallel(); testWorkingMemoryHistory(t, open) })
	t.Run("Idempotency", func(t *testing.T) { t.Parallel(); testIdempotency(t, open) })
	t.Run("Transactions", func(t *testing.T) { t.Parallel(); testTransactions(t, open) })
	t.Run("Forks", func(t *testing.T) { t.Parallel(); testForks(t, open) })
	t.Run("WriteIDs", func(t *testing.T) { t.Parallel(); testWriteIDs(t, open) })
	t.Run("SessionKeys", func(t *testing.T) { t.Parallel(); testSessionKeys(t, open) })
	t.Run("DeepForks", func(t *testing.T) { t.Parallel(); testDeepForks(t, open) })
	t.Run("MessageDeletions", func(t *testing.T) { t.Parallel(); testMessageDeletions(t, open) })
	t.Run("MessageTombstones", func(t *testing.T) { testMessageTombstones(t, open) })
	t.Run("Concurrency", func(t *testing.T) { t.Parallel(); testConcurrency(t, open) })
	t.Run("Runs", func(t *testing.T) { t.Parallel(); testRuns(t, open) })
	t.Run("LongTerm", func(t *testing.T) { t.Parallel(); testLongTerm(t, open) })
	t.Run("Forget", func(t *testing.T) { t.Parallel(); testForget(t, open) })
	t.Run("Retention", func(t *testing.T) { t.Parallel(); testRetention(t, open) })
	t.Run("NestedWrites", func(t *testing.T) { t.Parallel(); testNestedWrites(t, open) })
	t.Run("Webhooks", func(t *testing.T) { t.Parallel(); testWebhooks(t, open) })
	t.Run("Schedules", func(t *testing.T) { t.Parallel(); testSchedules(t, open) })
	t.Run("Summaries", func(t *testing.T) { t.Parallel(); testSummaries(t, open) })
	t.Run("Search", func(t *testing.T) { t.Parallel(); testSearch(t, open) })
	t.Run("SearchPlans", func(t *testing.T) { t.Parallel(); testSearchPlans(t, open) })
	t.Run("Extractions", func(t *testing.T) { t.Parallel(); testExtractions(t, open) })
	t.Run("Storage", func(t *testing.T) { t.Parallel(); testStorage(t, open) })
	t.Run("Limits", func(t *testing.T) { t.Parallel(); testLimits(t, open) })
	t.Run("Budgets", func(t *testing.T) { t.Parallel(); testBudgets(t, open) })
	t.Run("Usage", func(t *testing.T) { t.Parallel(); testUsage(t, open) })
}

// Owners used by the suite; B is always the one that must not see A's rows.
const (
	ownerA = "usr_a"
	ownerB = "usr_b"
)

// base is the suite's clock origin: UTC, microsecond precision, with a sub-second part so that a
// driver that drops precision is caught.
var base = time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC)

// at returns base plus sec seconds.
func at(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }

// write runs fn in a write transaction and fails the test on error.
func write(t testing.TB, st store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := st.Write(t.Context(), func(_ context.Context, tx store.Tx) error { return fn(tx) }); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// read runs fn in a read transaction and fails the test on error.
func read(t testing.TB, st store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := st.Read(t.Context(), fn); err != nil {
		t.Fatalf("read: %v", err)
	}
}

// wantCode fails the test unless err carries the carryon code want.
func wantCode(t testing.TB, err error, want string) {
	t.Helper()
	if got := carryon.ErrorCode(err); got != want {
		t.Fatalf("error code = %q (%v), want %q", got, err, want)
	}
}

// newSession returns an active session of owner last active at when.
func newSession(owner, id string, when time.Time) *carryon.Session {
	return &carryon.Session{
		ID: id, OwnerID: owner, Title: "title " + id, Status: carryon.SessionActive, Version: 1,
		CreatedAt: when, UpdatedAt: when, LastActiveAt: when, ExpiresAt: when.Add(time.Hour),
		IdleTTLSeconds: 3600, Metadata: json.RawMessage(`{"project":"x","n":1}`), Agent: "researcher",
	}
}

// insertSession stores s.
func insertSession(t testing.TB, st store.Store, s *carryon.Session) {
	t.Helper()
	write(t, st, func(tx store.Tx) error { return tx.InsertSession(t.Context(), s) })
}

// getSession reads the owner's session.
func getSession(t testing.TB, st store.Store, owner, id string) *carryon.Session {
	t.Helper()
	var s *carryon.Session
	read(t, st, func(tx store.Tx) error {
		var err error
		s, err = tx.GetSession(t.Context(), owner, id)
		return err
	})
	return s
}

// newMessage returns message seq of session id, stored at session version v.
func newMessage(id string, seq, v int64, content string) *carryon.Message {
	return &carryon.Message{
		SessionID: id, Seq: seq, Role: carryon.RoleUser, Kind: carryon.KindMessage, Content: content,
		Tokens: len(content), Version: v, CreatedAt: at(int(seq)),
	}
}

// AppendTurn appends, in tx, one user message with content to the owner's session id at its
// next seq, moving the session version by one (as the hub does), and returns the stored session.
// The message's CreatedAt is the suite's clock at its seq.
func AppendTurn(ctx context.Context, tx store.Tx, owner, id, content string) (*carryon.Session, error) {
	cur, err := tx.GetSession(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	prev := cur.Version
	cur.Version++
	cur.LastSeq++
	cur.MessageCount++
	m := newMessage(cur.ID, cur.LastSeq, cur.Version, content)
	if err := tx.InsertMessages(ctx, owner, []*carryon.Message{m}); err != nil {
		return nil, err
	}
	if err := tx.UpdateSession(ctx, cur, prev); err != nil {
		return nil, err
	}
	return cur, nil
}

// appendMessages appends one message per content to s, each in its own write that moves the
// session version by one (as the hub does), and updates s to the stored row.
func appendMessages(t testing.TB, st store.Store, s *carryon.Session, contents ...string) {
	t.Helper()
	for _, c := range contents {
		write(t, st, func(tx store.Tx) error {
			cur, err := AppendTurn(t.Context(), tx, s.OwnerID, s.ID, c)
			if err == nil {
				*s = *cur
			}
			return err
		})
	}
}

// jsonEqual reports whether a and b hold the same JSON value (both empty counts as equal), so a
// driver may normalise whitespace or key order.
func jsonEqual(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// docEqual compares working memory documents as JSON values.
func docEqual(a, b carryon.WorkingMemory) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && jsonEqual(x, y)
}

// checkSession fails the test unless got holds every field of want.
func checkSession(t testing.TB, got, want *carryon.Session) {
	t.Helper()
	if err := diffSession(got, want); err != nil {
		t.Fatalf("session %s: %v", want.ID, err)
	}
}

func diffSession(got, want *carryon.Session) error {
	type field struct {
		name      string
		got, want any
	}
	fields := []field{
		{"ID", got.ID, want.ID}, {"OwnerID", got.OwnerID, want.OwnerID}, {"ExternalID", got.ExternalID, want.ExternalID},
		{"Title", got.Title, want.Title},
		{"Status", got.Status, want.Status}, {"Version", got.Version, want.Version},
		{"ParentID", got.ParentID, want.ParentID}, {"ForkSeq", got.ForkSeq, want.ForkSeq},
		{"ForkVersion", got.ForkVersion, want.ForkVersion}, {"IdleTTLSeconds", got.IdleTTLSeconds, want.IdleTTLSeconds},
		{"MessageCount", got.MessageCount, want.MessageCount}, {"LastSeq", got.LastSeq, want.LastSeq},
		{"WorkingMemoryVersion", got.WorkingMemoryVersion, want.WorkingMemoryVersion},
	}
	for _, f := range fields {
		if f.got != f.want {
			return fmt.Errorf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	times := []struct {
		name      string
		got, want time.Time
	}{
		{"CreatedAt", got.CreatedAt, want.CreatedAt}, {"UpdatedAt", got.UpdatedAt, want.UpdatedAt},
		{"LastActiveAt", got.LastActiveAt, want.LastActiveAt}, {"ExpiresAt", got.ExpiresAt, want.ExpiresAt},
	}
	for _, f := range times {
		if !f.got.Equal(f.want) {
			return fmt.Errorf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	if !jsonEqual(got.Metadata, want.Metadata) {
		return fmt.Errorf("metadata = %s, want %s", got.Metadata, want.Metadata)
	}
	return nil
}

// checkMessage fails the test unless got holds every field of want.
func checkMessage(t testing.TB, got, want *carryon.Message) {
	t.Helper()
	g, w := *got, *want
	if !g.CreatedAt.Equal(w.CreatedAt) {
		t.Fatalf("message %d: CreatedAt = %v, want %v", w.Seq, g.CreatedAt, w.CreatedAt)
	}
	if !jsonEqual(g.ToolCalls, w.ToolCalls) || !jsonEqual(g.Metadata, w.Metadata) {
		t.Fatalf("message %d: tool calls/metadata = %s/%s, want %s/%s", w.Seq, g.ToolCalls, g.Metadata, w.ToolCalls, w.Metadata)
	}
	g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}
	g.ToolCalls, w.ToolCalls, g.Metadata, w.Metadata = nil, nil, nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("message:\n got %+v\nwant %+v", g, w)
	}
}

// contents returns the contents of msgs in order.
func contents(msgs []*carryon.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

// seqs returns the seqs of msgs in order.
func seqs(msgs []*carryon.Message) []int64 {
	out := []int64{}
	for _, m := range msgs {
		out = append(out, m.Seq)
	}
	return out
}

// errBoom is what a transaction function returns to force a rollback.
var errBoom = errors.New("boom")
