package sessions_test

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
)

func TestLostUpdateRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	f.append(t, f.alice, s.ID, "one")
	f.append(t, f.alice, s.ID, "two") // version 3
	v3 := int64(3)
	// Both clients read version 3; the first write wins.
	r, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{
		Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "first"}}, WriteOptions: carryon.WriteOptions{ExpectedVersion: &v3}})
	if err != nil || r.Version != 4 {
		t.Fatalf("first write: %v %+v", err, r)
	}
	_, err = f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{
		Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "second"}}, WriteOptions: carryon.WriteOptions{ExpectedVersion: &v3}})
	wantCode(t, err, carryon.EVERSION)
	if e, _ := carryon.AsError(err); e.CurrentVersion != 4 {
		t.Fatalf("current_version = %d, want 4", e.CurrentVersion)
	}
	_, err = f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"x"}`), WriteOptions: carryon.WriteOptions{ExpectedVersion: &v3}})
	wantCode(t, err, carryon.EVERSION)
	v, err := f.svc.Get(f.alice, s.ID, carryon.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(v.Messages); !reflect.DeepEqual(got, []string{"one", "two", "first"}) || v.Version != 4 || len(v.WorkingMemory) != 0 {
		t.Fatalf("after conflict: version %d messages %v memory %v", v.Version, got, v.WorkingMemory)
	}
}

func TestConcurrentDuplicateRequestID(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	in := carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "hello"}}, WriteOptions: carryon.WriteOptions{RequestID: "req-1"}}
	var wg sync.WaitGroup
	results := make([][]byte, 50)
	replays := make([]bool, 50)
	for i := range 50 {
		wg.Go(func() {
			rec := &carryon.WriteReceipt{}
			r, err := f.svc.AppendMessages(carryon.NewContextWithReceipt(f.alice, rec), s.ID, in)
			if err != nil {
				t.Error(err)
				return
			}
			results[i], _ = json.Marshal(r)
			replays[i] = rec.Replayed
		})
	}
	wg.Wait()
	fresh := 0
	for i := range results {
		if string(results[i]) != string(results[0]) {
			t.Fatalf("answer %d differs:\n%s\n%s", i, results[i], results[0])
		}
		if !replays[i] {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d requests were not replays, want 1", fresh)
	}
	v, _ := f.svc.Get(f.alice, s.ID, carryon.GetOptions{})
	if v.MessageCount != 1 || v.Version != 2 {
		t.Fatalf("message_count %d version %d, want 1 and 2", v.MessageCount, v.Version)
	}
	// The same key with another body is refused and changes nothing.
	in.Messages[0].Content = "other"
	_, err := f.svc.AppendMessages(f.alice, s.ID, in)
	wantCode(t, err, carryon.EKEYREUSED)
	// Bob repeating Alice's request, key and all, is not found, never Alice's stored answer.
	_, err = f.svc.AppendMessages(f.bob, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "hello"}}, WriteOptions: carryon.WriteOptions{RequestID: "req-1"}})
	wantCode(t, err, carryon.ENOTFOUND)
	// Bob's request with Alice's key value is his own: on his session it appends.
	bs := f.create(t, f.bob)
	r, err := f.svc.AppendMessages(f.bob, bs.ID, in)
	if err != nil || r.Messages[0].Content != "other" || r.SessionID != bs.ID {
		t.Fatalf("bob's request: %v %+v", err, r)
	}
}

func TestRequestIDOnEveryWrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	opt := carryon.WriteOptions{RequestID: "create-1"}
	a, err := f.svc.Create(f.alice, carryon.NewSession{Title: "x", WriteOptions: opt})
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.svc.Create(f.alice, carryon.NewSession{Title: "x", WriteOptions: opt})
	if err != nil || b.ID != a.ID {
		t.Fatalf("retried create made another session: %v %s %s", err, a.ID, b.ID)
	}
	p := carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"notes":["n"]}`), WriteOptions: carryon.WriteOptions{RequestID: "p-1"}}
	m1, err := f.svc.PatchWorkingMemory(f.alice, a.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := f.svc.PatchWorkingMemory(f.alice, a.ID, p)
	if err != nil || !reflect.DeepEqual(m1, m2) || m2.WorkingMemoryVersion != 1 {
		t.Fatalf("retried patch: %v %+v %+v", err, m1, m2)
	}
	if err := f.svc.Delete(f.alice, a.ID, carryon.WriteOptions{RequestID: "d-1"}); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Delete(f.alice, a.ID, carryon.WriteOptions{RequestID: "d-1"}); err != nil {
		t.Fatalf("retried delete: %v", err)
	}
}
