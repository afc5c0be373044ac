package carryonadk_test

import (
	"errors"
	"testing"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/contrib/adk"
)

func create(t *testing.T, s *carryonadk.Service, user, id string, state map[string]any) session.Session {
	t.Helper()
	got, err := s.Create(t.Context(), &session.CreateRequest{AppName: "trips", UserID: user, SessionID: id, State: state})
	if err != nil {
		t.Fatal(err)
	}
	return got.Session
}

func get(t *testing.T, s *carryonadk.Service, user, id string) session.Session {
	t.Helper()
	got, err := s.Get(t.Context(), &session.GetRequest{AppName: "trips", UserID: user, SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	return got.Session
}

func event(id, text string, delta map[string]any) *session.Event {
	ev := &session.Event{ID: id, Author: "planner", InvocationID: "inv-" + id, Actions: session.EventActions{StateDelta: delta}}
	ev.Content = genai.NewContentFromText(text, genai.RoleModel)
	return ev
}

// TestEventIsOneWrite: an event with a state delta is one carryon write: one version, one
// message whose version is the working memory's; carryon's own view of the session sees the
// goal and next action; the same event appended again (a retry from a fresh handle) is stored
// once.
func TestEventIsOneWrite(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			th := newHub(t, "")
			s := m.service(th, false, carryonadk.Options{})
			sess := create(t, s, "u1", "trip-1", nil)
			as := carryon.NewContextWithUser(t.Context(), th.alice)
			before, err := th.hub.Sessions.Get(as, carryonadk.CarryonID(sess), carryon.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ev := event("e1", "Let us go to Lisbon.", map[string]any{"goal": "plan a trip to Lisbon", "next_action": "book flights", "temp:scratch": 1})
			if err := s.AppendEvent(t.Context(), sess, ev); err != nil {
				t.Fatal(err)
			}
			if _, ok := ev.Actions.StateDelta["temp:scratch"]; ok {
				t.Fatal("the temp: key stayed in the event")
			}
			after, err := th.hub.Sessions.Get(as, before.ID, carryon.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if after.Version != before.Version+1 || len(after.Messages) != 1 || after.Messages[0].Version != after.Version {
				t.Fatalf("versions %d → %d, messages %+v; want one write", before.Version, after.Version, after.Messages)
			}
			if after.WorkingMemory.Goal() != "plan a trip to Lisbon" || after.WorkingMemory.NextAction() != "book flights" || after.Messages[0].Content != "Let us go to Lisbon." {
				t.Fatalf("carryon sees %+v and %q", after.WorkingMemory, after.Messages[0].Content)
			}
			if _, ok := after.WorkingMemory["temp:scratch"]; ok {
				t.Fatal("temp: state was stored")
			}
			// A retry of the same event from another handle: the request id makes it one message.
			retry := *ev // the event as it was sent (its timestamp set by the first append)
			if err := s.AppendEvent(t.Context(), get(t, s, "u1", "trip-1"), &retry); err != nil {
				t.Fatal(err)
			}
			if n := get(t, s, "u1", "trip-1").Events().Len(); n != 1 {
				t.Fatalf("%d events after a retry of one; want 1", n)
			}
		})
	}
}

// TestStaleHandle: two handles read one session; one appends. With RejectStale the other's
// append is refused with ErrStaleSession (and stores nothing) until it reads the session again;
// without it, the append goes after the other writer's and both events are kept.
func TestStaleHandle(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			th := newHub(t, "")
			strict := m.service(th, false, carryonadk.Options{RejectStale: true})
			create(t, strict, "u1", "trip-1", nil)
			a, b := get(t, strict, "u1", "trip-1"), get(t, strict, "u1", "trip-1")
			if err := strict.AppendEvent(t.Context(), b, event("e1", "first writer", map[string]any{"next_action": "book flights"})); err != nil {
				t.Fatal(err)
			}
			err := strict.AppendEvent(t.Context(), a, event("e2", "stale writer", map[string]any{"next_action": "book hotel"}))
			if !errors.Is(err, carryonadk.ErrStaleSession) || carryon.ErrorCode(err) != carryon.EVERSION {
				t.Fatalf("a stale handle's append = %v; want ErrStaleSession wrapping EVERSION", err)
			}
			now := get(t, strict, "u1", "trip-1")
			if now.Events().Len() != 1 {
				t.Fatalf("%d events after a refused append; want 1", now.Events().Len())
			}
			if v, _ := now.State().Get("next_action"); v != "book flights" {
				t.Fatalf("next_action = %v after a refused append", v)
			}
			if err := strict.AppendEvent(t.Context(), now, event("e2", "fresh writer", map[string]any{"next_action": "book hotel"})); err != nil {
				t.Fatalf("the append from a fresh handle: %v", err)
			}

			loose := m.service(th, false, carryonadk.Options{})
			c, d := get(t, loose, "u1", "trip-1"), get(t, loose, "u1", "trip-1")
			if err := loose.AppendEvent(t.Context(), c, event("e3", "one", nil)); err != nil {
				t.Fatal(err)
			}
			if err := loose.AppendEvent(t.Context(), d, event("e4", "two", nil)); err != nil {
				t.Fatalf("an append after another writer, RejectStale off: %v", err)
			}
			if n := get(t, loose, "u1", "trip-1").Events().Len(); n != 4 {
				t.Fatalf("%d events; want 4", n)
			}
		})
	}
}

// TestOtherUsersSession: another ADK user of the same adapter, and another carryon user with the
// same ADK ids, find nothing (ErrNotFound), cannot append or delete, and list nothing of it; the
// other carryon user's create of the same ids makes a session of its own.
func TestOtherUsersSession(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			th := newHub(t, "")
			alice, bob := m.service(th, false, carryonadk.Options{}), m.service(th, true, carryonadk.Options{})
			sess := create(t, alice, "u1", "trip-1", map[string]any{"goal": "secret", "user:home": "Porto"})
			if err := alice.AppendEvent(t.Context(), sess, event("e1", "private", nil)); err != nil {
				t.Fatal(err)
			}
			for name, c := range map[string]struct {
				s    *carryonadk.Service
				user string
			}{"another ADK user": {alice, "u2"}, "another carryon user": {bob, "u1"}} {
				_, err := c.s.Get(t.Context(), &session.GetRequest{AppName: "trips", UserID: c.user, SessionID: "trip-1"})
				if !errors.Is(err, carryonadk.ErrNotFound) {
					t.Fatalf("%s: Get = %v; want ErrNotFound", name, err)
				}
				list, err := c.s.List(t.Context(), &session.ListRequest{AppName: "trips", UserID: c.user})
				if err != nil || len(list.Sessions) != 0 {
					t.Fatalf("%s: List = %+v, %v; want none", name, list, err)
				}
				if err := c.s.Delete(t.Context(), &session.DeleteRequest{AppName: "trips", UserID: c.user, SessionID: "trip-1"}); err != nil {
					t.Fatalf("%s: Delete = %v; want no error and no effect", name, err)
				}
			}
			// Bob's adapter given alice's handle: carryon refuses (the session is not his).
			err := bob.AppendEvent(t.Context(), sess, event("e2", "intrusion", nil))
			if !errors.Is(err, carryonadk.ErrNotFound) {
				t.Fatalf("bob appending to alice's handle = %v; want ErrNotFound", err)
			}
			all, err := bob.List(t.Context(), &session.ListRequest{AppName: "trips"})
			if err != nil || len(all.Sessions) != 0 {
				t.Fatalf("bob's List of the app = %+v, %v; want none", all, err)
			}
			own := create(t, bob, "u1", "trip-1", nil)
			if _, err := own.State().Get("user:home"); err == nil {
				t.Fatal("bob's session sees alice's user: state")
			}
			got := get(t, alice, "u1", "trip-1")
			if got.Events().Len() != 1 || got.Events().At(0).ID != "e1" {
				t.Fatalf("alice's session after bob: %d events", got.Events().Len())
			}
			if v, _ := got.State().Get("goal"); v != "secret" {
				t.Fatalf("alice's goal = %v", v)
			}
		})
	}
}
