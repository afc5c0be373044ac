package carryonadk_test

import (
	"testing"

	"google.golang.org/adk/v2/memory"

	"github.com/carryon-hub/carryon/contrib/adk"
)

// TestMemory: a session added to memory is found by a word of one of its events, for its user
// only.
func TestMemory(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			th := newHub(t, "")
			s := m.service(th, false, carryonadk.Options{})
			sess := create(t, s, "u1", "trip-1", nil)
			for id, text := range map[string]string{"e1": "The hotel is near the Alfama.", "e2": "Flights leave on Friday."} {
				if err := s.AppendEvent(t.Context(), sess, event(id, text, nil)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.AddSessionToMemory(t.Context(), get(t, s, "u1", "trip-1")); err != nil {
				t.Fatal(err)
			}
			got, err := s.SearchMemory(t.Context(), &memory.SearchRequest{AppName: "trips", UserID: "u1", Query: "Alfama"})
			if err != nil || len(got.Memories) != 1 || got.Memories[0].Content.Parts[0].Text != "The hotel is near the Alfama." {
				t.Fatalf("search = %+v, %v; want the hotel event", got, err)
			}
			other, err := s.SearchMemory(t.Context(), &memory.SearchRequest{AppName: "trips", UserID: "u2", Query: "Alfama"})
			if err != nil || len(other.Memories) != 0 {
				t.Fatalf("another user's search = %+v, %v; want nothing", other, err)
			}
		})
	}
}
