package sessions_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/carryon-hub/carryon"
)

// TestOwnership calls every method of the service as Bob on Alice's session.
func TestOwnership(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	f.append(t, f.alice, s.ID, "secret")
	id := s.ID
	calls := map[string]func(ctx context.Context) error{
		"Get": func(ctx context.Context) error { _, err := f.svc.Get(ctx, id, carryon.GetOptions{}); return err },
		"ContextSnapshot": func(ctx context.Context) error {
			_, err := f.svc.ContextSnapshot(ctx, id, carryon.ContextSnapshotRequest{Messages: 10, Actions: 5, LongTermItems: 5})
			return err
		},
		"Update": func(ctx context.Context) error {
			_, err := f.svc.Update(ctx, id, carryon.SessionUpdate{Title: carryon.Ptr("x")})
			return err
		},
		"Close":   func(ctx context.Context) error { _, err := f.svc.Close(ctx, id, carryon.WriteOptions{}); return err },
		"Restore": func(ctx context.Context) error { _, err := f.svc.Restore(ctx, id, carryon.WriteOptions{}); return err },
		"Delete":  func(ctx context.Context) error { return f.svc.Delete(ctx, id, carryon.WriteOptions{}) },
		"Fork":    func(ctx context.Context) error { _, err := f.svc.Fork(ctx, id, carryon.ForkInput{}); return err },
		"Append": func(ctx context.Context) error {
			_, err := f.svc.AppendMessages(ctx, id, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "x"}}})
			return err
		},
		"ListMessages": func(ctx context.Context) error {
			_, err := f.svc.ListMessages(ctx, id, carryon.MessageFilter{})
			return err
		},
		"GetWorkingMemory": func(ctx context.Context) error { _, err := f.svc.GetWorkingMemory(ctx, id); return err },
		"PatchMemory": func(ctx context.Context) error {
			_, err := f.svc.PatchWorkingMemory(ctx, id, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"x"}`)})
			return err
		},
		"WorkingMemoryHistory": func(ctx context.Context) error {
			_, err := f.svc.WorkingMemoryHistory(ctx, id, carryon.RevisionFilter{})
			return err
		},
		"WorkingMemoryDiff": func(ctx context.Context) error { _, err := f.svc.WorkingMemoryDiff(ctx, id, 0, 0); return err },
	}
	for name, call := range calls {
		if err := call(f.bob); carryon.ErrorCode(err) != carryon.ENOTFOUND {
			t.Errorf("%s as another user: %v, want not_found", name, err)
		}
		if err := call(context.Background()); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
			t.Errorf("%s without a user: %v, want unauthorized", name, err)
		}
	}
	v, err := f.svc.Get(f.alice, id, carryon.GetOptions{})
	if err != nil || v.Version != 2 || v.Title != "t" || v.Status != carryon.SessionActive {
		t.Fatalf("Alice's session changed: %v %+v", err, v)
	}
	if p, _ := f.svc.List(f.bob, carryon.SessionFilter{}); len(p.Items) != 0 {
		t.Fatalf("Bob lists %d sessions", len(p.Items))
	}
}
