package carryonadk

import (
	"iter"
	"maps"
	"time"

	"google.golang.org/adk/v2/session"
)

// adkSession is an ADK session read from carryon: a handle that remembers the carryon session
// and the version it saw.
type adkSession struct {
	id, app, user string
	carryonID     string
	version       int64
	updated       time.Time
	state         map[string]any
	events        []*session.Event
}

var _ session.Session = (*adkSession)(nil)

func (s *adkSession) ID() string                { return s.id }
func (s *adkSession) AppName() string           { return s.app }
func (s *adkSession) UserID() string            { return s.user }
func (s *adkSession) State() session.State      { return state{s.state} }
func (s *adkSession) Events() session.Events    { return events(s.events) }
func (s *adkSession) LastUpdateTime() time.Time { return s.updated }

// CarryonID returns the id of the carryon session that holds an ADK session read or made by a
// Service, or "" for a session of another implementation.
func CarryonID(s session.Session) string {
	if a, ok := s.(*adkSession); ok {
		return a.carryonID
	}
	return ""
}

// state is a session's state as the handle knows it.
type state struct{ m map[string]any }

func (st state) Get(key string) (any, error) {
	v, ok := st.m[key]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return v, nil
}

func (st state) Set(key string, v any) error {
	st.m[key] = v
	return nil
}

func (st state) All() iter.Seq2[string, any] { return maps.All(st.m) }

// events are a session's events in order.
type events []*session.Event

func (e events) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, ev := range e {
			if !yield(ev) {
				return
			}
		}
	}
}

func (e events) Len() int                { return len(e) }
func (e events) At(i int) *session.Event { return e[i] }
