package sessions_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/carryon-hub/carryon"
)

// visible returns the contents of every message of id the caller of ctx can read, oldest first.
func (f *fixture) visible(t *testing.T, ctx context.Context, id string) []string {
	t.Helper()
	page, err := f.svc.ListMessages(ctx, id, carryon.MessageFilter{Limit: carryon.MaxMessageWindow})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range page.Items {
		out = append(out, m.Content)
	}
	return out
}

func TestDeleteMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	f.append(t, f.alice, s.ID, "one", "two", "three") // version 2
	before, err := f.svc.Fork(f.alice, s.ID, carryon.ForkInput{})
	if err != nil {
		t.Fatal(err)
	}
	// A stale expected version is refused and changes nothing.
	stale := int64(1)
	_, err = f.svc.DeleteMessage(f.alice, s.ID, 2, carryon.WriteOptions{ExpectedVersion: &stale})
	wantCode(t, err, carryon.EVERSION)
	// Another user's session is not found; so is a seq it never had.
	_, err = f.svc.DeleteMessage(f.bob, s.ID, 2, carryon.WriteOptions{})
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = f.svc.DeleteMessage(f.alice, s.ID, 4, carryon.WriteOptions{})
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = f.svc.DeleteMessage(f.alice, s.ID, 0, carryon.WriteOptions{})
	wantCode(t, err, carryon.EINVALID)

	v := int64(2)
	got, err := f.svc.DeleteMessage(f.alice, s.ID, 2, carryon.WriteOptions{ExpectedVersion: &v, RequestID: "del-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 3 || got.MessageCount != 2 || got.LastSeq != 3 {
		t.Fatalf("after delete: version %d, count %d, last seq %d; want 3, 2, 3", got.Version, got.MessageCount, got.LastSeq)
	}
	// The same request again is answered as the first time and deletes nothing more.
	again, err := f.svc.DeleteMessage(f.alice, s.ID, 2, carryon.WriteOptions{ExpectedVersion: &v, RequestID: "del-1"})
	if err != nil || again.Version != 3 {
		t.Fatalf("replay = %+v, %v; want version 3", again, err)
	}
	_, err = f.svc.DeleteMessage(f.alice, s.ID, 3, carryon.WriteOptions{RequestID: "del-1"})
	wantCode(t, err, carryon.EKEYREUSED)
	// Deleted already: not found.
	_, err = f.svc.DeleteMessage(f.alice, s.ID, 2, carryon.WriteOptions{})
	wantCode(t, err, carryon.ENOTFOUND)

	if w := []string{"one", "three"}; !reflect.DeepEqual(f.visible(t, f.alice, s.ID), w) {
		t.Fatalf("session reads %v, want %v", f.visible(t, f.alice, s.ID), w)
	}
	view, err := f.svc.Get(f.alice, s.ID, carryon.GetOptions{})
	if err != nil || len(view.Messages) != 2 || view.Version != 3 {
		t.Fatalf("get = %+v, %v; want two messages at version 3", view, err)
	}
	snap, err := f.svc.ContextSnapshot(f.alice, s.ID, carryon.ContextSnapshotRequest{Messages: 10})
	if err != nil || len(snap.View.Messages) != 2 || snap.View.Messages[1].Content != "three" {
		t.Fatalf("context snapshot = %+v, %v; want one, three", snap, err)
	}
	// The fork made before keeps the message; a fork made now and one at the version before
	// the delete see what the session saw then.
	if w := []string{"one", "two", "three"}; !reflect.DeepEqual(f.visible(t, f.alice, before.ID), w) {
		t.Fatalf("earlier fork reads %v, want %v", f.visible(t, f.alice, before.ID), w)
	}
	after, err := f.svc.Fork(f.alice, s.ID, carryon.ForkInput{})
	if err != nil {
		t.Fatal(err)
	}
	if w := []string{"one", "three"}; !reflect.DeepEqual(f.visible(t, f.alice, after.ID), w) || after.MessageCount != 2 {
		t.Fatalf("later fork reads %v (count %d), want %v", f.visible(t, f.alice, after.ID), after.MessageCount, w)
	}
	atOld, err := f.svc.Fork(f.alice, s.ID, carryon.ForkInput{AtVersion: 2})
	if err != nil {
		t.Fatal(err)
	}
	if w := []string{"one", "two", "three"}; !reflect.DeepEqual(f.visible(t, f.alice, atOld.ID), w) || atOld.MessageCount != 3 {
		t.Fatalf("fork at version 2 reads %v (count %d), want %v", f.visible(t, f.alice, atOld.ID), atOld.MessageCount, w)
	}
	// A closed session takes no delete.
	if _, err := f.svc.Close(f.alice, s.ID, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.DeleteMessage(f.alice, s.ID, 1, carryon.WriteOptions{})
	wantCode(t, err, carryon.ECLOSED)
}

// A deleted tool call leaves its result stored; a later append may not answer it again, and
// the history still reads in order.
func TestDeleteToolCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	calls := json.RawMessage(`[{"id":"call_1","name":"lookup","arguments":{}}]`)
	_, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{
		{Role: carryon.RoleUser, Content: "look it up"},
		{Role: carryon.RoleAssistant, ToolCalls: calls},
		{Role: carryon.RoleTool, ToolCallID: "call_1", Content: "found"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.DeleteMessage(f.alice, s.ID, 2, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := []string{"look it up", "found"}; !reflect.DeepEqual(f.visible(t, f.alice, s.ID), w) {
		t.Fatalf("reads %v, want %v", f.visible(t, f.alice, s.ID), w)
	}
	_, err = f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{
		{Role: carryon.RoleTool, ToolCallID: "call_1", Content: "again"}}})
	wantCode(t, err, carryon.EINVALID)
}
