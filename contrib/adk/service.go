package carryonadk

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/session"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
	"github.com/carryon-hub/carryon/hub"
)

// ErrStaleSession is what AppendEvent answers, when the adapter is configured with RejectStale,
// for a session handle older than the session: another writer appended since the handle was read
// or last written. Get the session again and retry. errors.Is finds it; the carryon error
// (EVERSION, with the current version) is wrapped too.
var ErrStaleSession = errors.New("carryonadk: the session changed since this handle was read")

// ErrNotFound is wrapped by the errors of a session that does not exist or is another user's.
var ErrNotFound = errors.New("carryonadk: session not found")

// Options shape a Service.
type Options struct {
	// RejectStale makes AppendEvent write only when the session is still at the version the
	// handle saw (ErrStaleSession otherwise). Without it, an event is appended after whatever
	// other writers appended, and its state delta is merged into the state as it is then.
	RejectStale bool
}

// Service is ADK's session.Service and memory.Service over carryon.
type Service struct {
	sessions carryon.SessionService
	longTerm carryon.LongTermService
	user     *carryon.User
	opt      Options
}

var (
	_ session.Service = (*Service)(nil)
	_ memory.Service  = (*Service)(nil)
)

// New returns a Service over carryon's services. user, when not nil, is put in the context of
// every call (services in-process read the caller from it); nil suits services that know their
// caller already (the Go client, by its key).
func New(sessions carryon.SessionService, longTerm carryon.LongTermService, user *carryon.User, opt Options) *Service {
	return &Service{sessions: sessions, longTerm: longTerm, user: user, opt: opt}
}

// NewInProcess returns a Service over the services of a hub opened in this process, acting for
// user.
func NewInProcess(h *hub.Hub, user *carryon.User, opt Options) *Service {
	return New(h.Sessions, h.LongTerm, user, opt)
}

// NewHTTP returns a Service over a carryon server, acting for the user of the client's key.
func NewHTTP(c *client.Client, opt Options) *Service {
	return New(c, c.LongTerm(), nil, opt)
}

// as is ctx acting for the adapter's user.
func (s *Service) as(ctx context.Context) context.Context {
	if s.user != nil {
		return carryon.NewContextWithUser(ctx, s.user)
	}
	return ctx
}

// externalID is the carryon external id of an ADK session: its app, user and session ids.
func externalID(app, user, id string) (string, error) {
	ext := "adk:" + url.PathEscape(app) + "/" + url.PathEscape(user) + "/" + url.PathEscape(id)
	if len(ext) > carryon.MaxExternalIDLen {
		return "", fmt.Errorf("carryonadk: app name, user id and session id are too long together (%d characters escaped; the limit is %d)", len(ext), carryon.MaxExternalIDLen)
	}
	return ext, nil
}

// sessionMeta is what a carryon session's metadata says of the ADK session it holds.
type sessionMeta struct {
	ADK struct {
		App       string `json:"app"`
		User      string `json:"user"`
		SessionID string `json:"session_id"`
	} `json:"adk"`
}

// Create makes a session. A SessionID that the user already has in the app is an error.
func (s *Service) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	if req == nil || req.AppName == "" || req.UserID == "" {
		return nil, fmt.Errorf("carryonadk: create needs an app name and a user id")
	}
	ctx = s.as(ctx)
	id := req.SessionID
	if id == "" {
		id = newID()
	}
	ext, err := externalID(req.AppName, req.UserID, id)
	if err != nil {
		return nil, err
	}
	app, user, local := splitState(req.State)
	if err := s.putShared(ctx, req.AppName, req.UserID, app, user); err != nil {
		return nil, err
	}
	var meta sessionMeta
	meta.ADK.App, meta.ADK.User, meta.ADK.SessionID = req.AppName, req.UserID, id
	rawMeta, _ := json.Marshal(meta)
	title := req.AppName + ": " + id
	if len(title) > 200 {
		title = title[:200]
	}
	sess, err := s.sessions.Create(ctx, carryon.NewSession{
		Title: strings.ToValidUTF8(title, ""), Metadata: rawMeta, WorkingMemory: carryon.WorkingMemory(local),
		ExternalID: ext, IfExists: carryon.IfExistsError,
	})
	if carryon.ErrorCode(err) == carryon.ECONFLICT {
		return nil, fmt.Errorf("carryonadk: session %q of user %q in app %q exists already: %w", id, req.UserID, req.AppName, err)
	} else if err != nil {
		return nil, fmt.Errorf("carryonadk: create session: %w", err)
	}
	out := &adkSession{id: id, app: req.AppName, user: req.UserID, carryonID: sess.ID, version: sess.Version,
		updated: sess.UpdatedAt, state: map[string]any{}}
	for k, v := range local {
		out.state[k] = v
	}
	if err := s.readShared(ctx, out); err != nil {
		return nil, err
	}
	return &session.CreateResponse{Session: out}, nil
}

// find returns the carryon session of an ADK session, or an error wrapping ErrNotFound.
func (s *Service) find(ctx context.Context, app, user, id string) (*carryon.Session, error) {
	ext, err := externalID(app, user, id)
	if err != nil {
		return nil, err
	}
	page, err := s.sessions.List(ctx, carryon.SessionFilter{ExternalID: ext})
	if err != nil {
		return nil, fmt.Errorf("carryonadk: find session: %w", err)
	}
	if len(page.Items) == 0 {
		return nil, fmt.Errorf("%w: %q of user %q in app %q", ErrNotFound, id, user, app)
	}
	return page.Items[0], nil
}

// Get returns a session with its state and events (the last NumRecentEvents, those at or after
// After).
func (s *Service) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	if req == nil {
		return nil, fmt.Errorf("carryonadk: get needs a request")
	}
	ctx = s.as(ctx)
	found, err := s.find(ctx, req.AppName, req.UserID, req.SessionID)
	if err != nil {
		return nil, err
	}
	view, err := s.sessions.Get(ctx, found.ID, carryon.GetOptions{Messages: -1})
	if carryon.ErrorCode(err) == carryon.ENOTFOUND {
		return nil, fmt.Errorf("%w: %q: %v", ErrNotFound, req.SessionID, err)
	} else if err != nil {
		return nil, fmt.Errorf("carryonadk: get session: %w", err)
	}
	out := &adkSession{id: req.SessionID, app: req.AppName, user: req.UserID, carryonID: view.ID, version: view.Version,
		updated: view.UpdatedAt, state: map[string]any{}}
	for k, v := range view.WorkingMemory {
		out.state[k] = v
	}
	if err := s.readShared(ctx, out); err != nil {
		return nil, err
	}
	events, err := s.events(ctx, view.ID)
	if err != nil {
		return nil, err
	}
	if !req.After.IsZero() {
		kept := events[:0]
		for _, e := range events {
			if !e.Timestamp.Before(req.After) {
				kept = append(kept, e)
			}
		}
		events = kept
	}
	if n := req.NumRecentEvents; n > 0 && len(events) > n {
		events = events[len(events)-n:]
	}
	out.events = events
	if len(events) > 0 {
		out.updated = events[len(events)-1].Timestamp
	}
	return &session.GetResponse{Session: out}, nil
}

// events reads the session's messages and returns the ADK events kept in their metadata, in
// order; messages that hold no event (written by carryon's own runs) are left out.
func (s *Service) events(ctx context.Context, id string) ([]*session.Event, error) {
	var out []*session.Event
	f := carryon.MessageFilter{Limit: carryon.MaxMessageWindow}
	for {
		page, err := s.sessions.ListMessages(ctx, id, f)
		if err != nil {
			return nil, fmt.Errorf("carryonadk: read events: %w", err)
		}
		for _, m := range page.Items {
			ev, err := eventOf(m)
			if err != nil {
				return nil, err
			}
			if ev != nil {
				out = append(out, ev)
			}
		}
		if page.NextCursor == "" || len(page.Items) == 0 {
			return out, nil
		}
		f.Cursor = page.NextCursor
	}
}

// List returns the sessions of a user in the app, or of every user when UserID is empty, without
// their events.
func (s *Service) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	if req == nil {
		return nil, fmt.Errorf("carryonadk: list needs a request")
	}
	ctx = s.as(ctx)
	out := &session.ListResponse{Sessions: []session.Session{}}
	f := carryon.SessionFilter{Limit: carryon.MaxMessageWindow}
	for {
		page, err := s.sessions.List(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("carryonadk: list sessions: %w", err)
		}
		for _, c := range page.Items {
			var meta sessionMeta
			if json.Unmarshal(c.Metadata, &meta) != nil || meta.ADK.App != req.AppName || meta.ADK.SessionID == "" {
				continue
			}
			if req.UserID != "" && meta.ADK.User != req.UserID {
				continue
			}
			// The external id is the proof that the session is the one its metadata names
			// (metadata can be changed by a client; the external id cannot).
			if ext, err := externalID(meta.ADK.App, meta.ADK.User, meta.ADK.SessionID); err != nil || ext != c.ExternalID {
				continue
			}
			out.Sessions = append(out.Sessions, &adkSession{id: meta.ADK.SessionID, app: meta.ADK.App, user: meta.ADK.User,
				carryonID: c.ID, version: c.Version, updated: c.UpdatedAt, state: map[string]any{}})
		}
		if page.NextCursor == "" {
			return out, nil
		}
		f.Cursor = page.NextCursor
	}
}

// Delete removes a session; a session that does not exist (or is another user's) is left as it
// is and is no error.
func (s *Service) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req == nil {
		return fmt.Errorf("carryonadk: delete needs a request")
	}
	ctx = s.as(ctx)
	found, err := s.find(ctx, req.AppName, req.UserID, req.SessionID)
	if errors.Is(err, ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if err := s.sessions.Delete(ctx, found.ID, carryon.WriteOptions{}); err != nil && carryon.ErrorCode(err) != carryon.ENOTFOUND {
		return fmt.Errorf("carryonadk: delete session: %w", err)
	}
	return nil
}

// AppendEvent stores an event as one message of the session, with the event in its metadata and
// its session-scoped state delta applied to the working memory in the same write; app: and
// user: state go to long-term memory items first, temp: state is dropped from the event. A
// partial event is not stored. The request id is made of the session and event ids, so a retry
// of the same event stores it once.
func (s *Service) AppendEvent(ctx context.Context, cur session.Session, ev *session.Event) error {
	if cur == nil || ev == nil {
		return fmt.Errorf("carryonadk: append needs a session and an event")
	}
	if ev.Partial {
		return nil
	}
	ctx = s.as(ctx)
	sess, ours := cur.(*adkSession)
	if !ours {
		found, err := s.find(ctx, cur.AppName(), cur.UserID(), cur.ID())
		if err != nil {
			return err
		}
		sess = &adkSession{id: cur.ID(), app: cur.AppName(), user: cur.UserID(), carryonID: found.ID, version: found.Version, state: map[string]any{}}
	}
	if ev.ID == "" {
		ev.ID = newID()
	}
	if ev.Timestamp.IsZero() {
		ev.Timestamp = time.Now()
	}
	// The handle sees the whole delta (temp: too, for the rest of the invocation); the event
	// stored and returned keeps none of temp:.
	for k, v := range ev.Actions.StateDelta {
		sess.state[k] = v
	}
	for k := range ev.Actions.StateDelta {
		if strings.HasPrefix(k, session.KeyPrefixTemp) {
			delete(ev.Actions.StateDelta, k)
		}
	}
	app, user, local := splitState(ev.Actions.StateDelta)
	if err := s.putShared(ctx, sess.app, sess.user, app, user); err != nil {
		return err
	}
	msg, err := messageOf(ev)
	if err != nil {
		return err
	}
	in := carryon.AppendInput{Messages: []carryon.NewMessage{msg}, WriteOptions: carryon.WriteOptions{RequestID: requestID(sess.carryonID, ev.ID)}}
	if len(local) > 0 {
		patch, err := json.Marshal(local)
		if err != nil {
			return fmt.Errorf("carryonadk: state delta: %w", err)
		}
		in.WorkingMemoryPatch = patch
	}
	if s.opt.RejectStale && ours {
		in.ExpectedVersion = carryon.Ptr(sess.version)
	}
	res, err := s.sessions.AppendMessages(ctx, sess.carryonID, in)
	switch carryon.ErrorCode(err) {
	case "":
	case carryon.EVERSION:
		return fmt.Errorf("%w (session %q): %w", ErrStaleSession, sess.id, err)
	case carryon.ENOTFOUND:
		return fmt.Errorf("%w: %q: %w", ErrNotFound, sess.id, err)
	default:
		return fmt.Errorf("carryonadk: append event: %w", err)
	}
	sess.version = res.Version
	sess.updated = ev.Timestamp
	sess.events = append(sess.events, ev)
	return nil
}

// requestID is the request id of an event's write: the session's and the event's ids (hashed
// when they are too long together).
func requestID(sessionID, eventID string) string {
	id := "adk-event:" + sessionID + ":" + eventID
	if len(id) <= carryon.MaxRequestIDLength {
		return id
	}
	sum := sha256.Sum256([]byte(eventID))
	return "adk-event:" + sessionID + ":sha256:" + hex.EncodeToString(sum[:])
}

// newID returns a random id for a session or an event that has none.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
