package sessions

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Limits on session fields.
const (
	maxTitleLen     = 500
	maxMetadataLen  = 64 << 10
	minIdleTTL      = 60
	maxIdleTTL      = 10 * 365 * 24 * 3600
	defaultPageSize = carryon.DefaultPageSize
)

// Create makes a session owned by the caller, at version 1.
func (s *Service) Create(ctx context.Context, in carryon.NewSession) (*carryon.Session, error) {
	if in.ExpectedVersion != nil {
		return nil, carryon.Errorf(carryon.EINVALID, "expected_version names a version of an existing session; a new session has none yet")
	}
	if err := validTitle(in.Title); err != nil {
		return nil, err
	}
	if err := validMetadata(in.Metadata); err != nil {
		return nil, err
	}
	if err := validExternalID(in); err != nil {
		return nil, err
	}
	if err := in.Budget.Check("budget"); err != nil {
		return nil, err
	}
	in.Budget = normalBudget(in.Budget)
	agent, err := s.CheckAgent(in.Agent)
	if err != nil {
		return nil, err
	}
	in.Agent = agent
	ttl := int64(s.cfg.IdleTTL / time.Second)
	if in.IdleTTLSeconds != nil {
		if err := validTTL(*in.IdleTTLSeconds); err != nil {
			return nil, err
		}
		ttl = *in.IdleTTLSeconds
	}
	var doc []byte
	if len(in.WorkingMemory) > 0 {
		b, err := json.Marshal(in.WorkingMemory)
		if err != nil {
			return nil, carryon.Errorf(carryon.EINVALID, "working_memory: %v", err)
		}
		if len(b) > maxWorkingMemoryBytes {
			return nil, carryon.Errorf(carryon.EINVALID, "working_memory is %d bytes; the limit is %d", len(b), maxWorkingMemoryBytes)
		}
		if err := carryon.CheckJSONText("working_memory", b); err != nil {
			return nil, err
		}
		doc = b
	}
	var pending map[string]int
	if len(in.Messages) > 0 {
		if pending, err = validClientMessages(in.Messages); err != nil {
			return nil, err
		}
	}
	key := in.RequestID
	in.RequestID = ""
	create := insertTx(ctx, in, ttl, doc, pending, key)
	sess, err := Write(ctx, s, "session.create", "", key, in, create)
	if carryon.ErrorCode(err) == carryon.ECONFLICT && in.ExternalID != "" && in.IfExists != carryon.IfExistsError {
		// A concurrent create took the external id between this one's look-up and its insert (the
		// unique index refused the second row): the session is there now, so answer it.
		sess, err = Write(ctx, s, "session.create", "", key, in, create)
	}
	return sess, err
}

// CreateInTx makes a session of owner titled title, bound to agent profile agent (default
// "default"), with the default idle TTL and an empty working memory, in the transaction of a
// larger write (a chat writes its new session, its first message and its run at once).
func (s *Service) CreateInTx(ctx context.Context, tx store.Tx, owner, title, agent string, now time.Time) (*carryon.Session, error) {
	if err := validTitle(title); err != nil {
		return nil, err
	}
	agent, err := s.CheckAgent(agent)
	if err != nil {
		return nil, err
	}
	return insertTx(ctx, carryon.NewSession{Title: title, Agent: agent}, int64(s.cfg.IdleTTL/time.Second), nil, nil, "")(tx, owner, now)
}

// CheckAgent returns the name of the agent profile name means ("" is the default one), or
// EINVALID naming the known profiles when the server has none of that name.
func (s *Service) CheckAgent(name string) (string, error) {
	if name == "" {
		name = carryon.DefaultAgent
	}
	if s.cfg.Agents == nil {
		if name != carryon.DefaultAgent {
			return "", carryon.Errorf(carryon.EINVALID, "agent %q is not a profile of this server; the known ones are: %s", name, carryon.DefaultAgent)
		}
		return name, nil
	}
	if _, err := s.cfg.Agents.Agent(name); err != nil {
		return "", err
	}
	return name, nil
}

// insertTx stores a new session checked by Create, with its first working memory doc and its
// first messages (pending: their tool messages that must find their calls; key: the request id
// they are linked to) if any. A session found by its external id is answered unchanged.
func insertTx(ctx context.Context, in carryon.NewSession, ttl int64, doc []byte, pending map[string]int, key string) WriteFunc[*carryon.Session] {
	return func(tx store.Tx, own string, now time.Time) (*carryon.Session, error) {
		if found, err := existingTx(ctx, tx, own, in, now); found != nil || err != nil {
			return found, err
		}
		if err := tx.LockOwner(ctx, own); err != nil {
			return nil, err
		}
		sess := &carryon.Session{
			ID: carryon.NewID(carryon.SessionIDPrefix), OwnerID: own, ExternalID: in.ExternalID, Title: in.Title, TitleDerived: in.TitleDerived && in.Title != "", Status: carryon.SessionActive,
			Version: 1, CreatedAt: now, UpdatedAt: now, LastActiveAt: now,
			ExpiresAt: now.Add(time.Duration(ttl) * time.Second), IdleTTLSeconds: ttl,
			Metadata: compactJSON(in.Metadata), Agent: in.Agent,
		}
		if doc != nil {
			sess.WorkingMemoryVersion = 1
		}
		if err := tx.InsertSession(ctx, sess); err != nil {
			return nil, err
		}
		if !in.Budget.Empty() {
			if err := tx.PutSessionBudget(ctx, own, sess.ID, in.Budget, now); err != nil {
				return nil, err
			}
			sess.Budget = in.Budget
		}
		if doc != nil {
			var wm carryon.WorkingMemory
			_ = json.Unmarshal(doc, &wm)
			err := tx.InsertWorkingMemoryRevision(ctx, own, &carryon.WorkingMemoryRevision{
				SessionID: sess.ID, WorkingMemoryVersion: 1, Version: 1, Patch: doc, Document: wm, CreatedAt: now,
			})
			if err != nil {
				return nil, err
			}
		}
		if len(in.Messages) > 0 {
			if err := findCalls(ctx, tx, sess, in.Messages, pending); err != nil {
				return nil, err
			}
			if _, err := AppendInTx(ctx, tx, sess, in.Messages, "", key, now); err != nil {
				return nil, err
			}
		}
		return sess, nil
	}
}

// CreateSession is a synonym of Create.
func (s *Service) CreateSession(ctx context.Context, in carryon.NewSession) (*carryon.Session, error) {
	return s.Create(ctx, in)
}

// Get returns the session with its working memory and its last messages.
func (s *Service) Get(ctx context.Context, id string, opt carryon.GetOptions) (*carryon.SessionView, error) {
	n := opt.Messages
	switch {
	case n == 0:
		n = carryon.DefaultMessageWindow
	case n < -1 || n > carryon.MaxMessageWindow:
		return nil, carryon.Errorf(carryon.EINVALID, "messages must be between 0 and %d", carryon.MaxMessageWindow)
	}
	var view *carryon.SessionView
	err := s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		var err error
		bctx, budget := store.WithReadBudget(ctx, s.cfg.MaxReadBytes)
		if view, err = readView(bctx, tx, own, id, n, now); err == nil && budget.Spent() {
			view.MessagesTruncated = true
		}
		return err
	})
	return view, err
}

// readView reads the owner's session with its working memory and its last n messages (none when
// n is not positive) as of now.
func readView(ctx context.Context, tx store.Tx, own, id string, n int, now time.Time) (*carryon.SessionView, error) {
	sess, err := tx.GetSession(ctx, own, id)
	if err != nil {
		return nil, err
	}
	wm, _, err := tx.GetWorkingMemory(ctx, own, id)
	if err != nil {
		return nil, err
	}
	msgs := []*carryon.Message{}
	if n > 0 {
		if msgs, err = tx.LastMessages(ctx, own, sess, n); err != nil {
			return nil, err
		}
	}
	if err := withBudget(ctx, tx, sess, true); err != nil {
		return nil, err
	}
	sess.Status = sess.StatusAt(now)
	return &carryon.SessionView{Session: *sess, WorkingMemory: nonNil(wm), Messages: msgs}, nil
}

// GetSession is a synonym of Get.
func (s *Service) GetSession(ctx context.Context, id string, opt carryon.GetOptions) (*carryon.SessionView, error) {
	return s.Get(ctx, id, opt)
}

// List returns the caller's sessions, newest first by creation. The order never changes, so a
// session written while a client pages keeps its place and is not skipped.
func (s *Service) List(ctx context.Context, f carryon.SessionFilter) (*carryon.SessionPage, error) {
	switch f.Status {
	case "", carryon.SessionActive, carryon.SessionClosed, carryon.SessionExpired:
	default:
		return nil, carryon.Errorf(carryon.EINVALID, "status must be active, closed or expired, not %q", f.Status)
	}
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	if f.ExternalID != "" {
		if err := checkExternalID(f.ExternalID); err != nil {
			return nil, err
		}
	}
	q := store.SessionQuery{Status: f.Status, ExternalID: f.ExternalID, Limit: limit + 1}
	if err := searchFilter(f, &q); err != nil {
		return nil, err
	}
	if f.Cursor != "" {
		if q.AfterCreated, q.AfterID, err = DecodeCursor(f.Cursor); err != nil {
			return nil, err
		}
	}
	page := &carryon.SessionPage{Items: []*carryon.Session{}}
	err = s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		q.Now = now
		items, err := tx.ListSessions(ctx, own, q)
		if err != nil {
			return err
		}
		if len(items) > limit {
			items = items[:limit]
			last := items[limit-1]
			page.NextCursor = EncodeCursor(last.CreatedAt, last.ID)
		}
		for _, it := range items {
			it.Status = it.StatusAt(now)
		}
		page.Items = items
		return nil
	})
	return page, err
}

// Update changes the title, metadata (replaced as a whole, never merged) or idle TTL of a
// session. An update that changes nothing stores nothing: the version stays and the idle clock
// does not restart.
func (s *Service) Update(ctx context.Context, id string, in carryon.SessionUpdate) (*carryon.Session, error) {
	if in.Title != nil {
		if err := validTitle(*in.Title); err != nil {
			return nil, err
		}
	}
	if err := validMetadata(in.Metadata); err != nil {
		return nil, err
	}
	if in.IdleTTLSeconds != nil {
		if err := validTTL(*in.IdleTTLSeconds); err != nil {
			return nil, err
		}
	}
	if err := in.Budget.Check("budget"); err != nil {
		return nil, err
	}
	in.Budget = normalBudget(in.Budget)
	key := in.RequestID
	in.RequestID = ""
	return Write(ctx, s, "session.update", id, key, in, func(tx store.Tx, own string, now time.Time) (*carryon.Session, error) {
		sess, err := LoadWritable(ctx, tx, own, id, in.ExpectedVersion, nil, now)
		if err != nil {
			return nil, err
		}
		changed := false
		if in.Title != nil && *in.Title != sess.Title {
			sess.Title, sess.TitleDerived, changed = *in.Title, false, true
		}
		if m := compactJSON(in.Metadata); in.Metadata != nil && !bytes.Equal(m, sess.Metadata) {
			sess.Metadata, changed = m, true
		}
		if in.IdleTTLSeconds != nil && *in.IdleTTLSeconds != sess.IdleTTLSeconds {
			sess.IdleTTLSeconds, changed = *in.IdleTTLSeconds, true
		}
		if err := withBudget(ctx, tx, sess, false); err != nil {
			return nil, err
		}
		if in.Budget != nil && !sameBudget(sess.Budget, in.Budget) {
			if err := tx.PutSessionBudget(ctx, own, sess.ID, in.Budget, now); err != nil {
				return nil, err
			}
			sess.Budget, changed = nil, true
			if !in.Budget.Empty() {
				sess.Budget = in.Budget
			}
		}
		if !changed {
			return sess, nil
		}
		return sess, Touch(ctx, tx, sess, now)
	})
}

// Close stops writes to a session and keeps its history.
func (s *Service) Close(ctx context.Context, id string, opt carryon.WriteOptions) (*carryon.Session, error) {
	return s.setStatus(ctx, "session.close", id, opt, carryon.SessionClosed)
}

// Restore reopens a closed or expired session and restarts its idle clock.
func (s *Service) Restore(ctx context.Context, id string, opt carryon.WriteOptions) (*carryon.Session, error) {
	return s.setStatus(ctx, "session.restore", id, opt, carryon.SessionActive)
}

func (s *Service) setStatus(ctx context.Context, op, id string, opt carryon.WriteOptions, to carryon.SessionStatus) (*carryon.Session, error) {
	key := opt.RequestID
	opt.RequestID = ""
	return Write(ctx, s, op, id, key, opt, func(tx store.Tx, own string, now time.Time) (*carryon.Session, error) {
		sess, err := tx.GetSession(ctx, own, id)
		if err != nil {
			return nil, err
		}
		if err := checkVersion(sess, opt.ExpectedVersion); err != nil {
			return nil, err
		}
		if sess.StatusAt(now) == to {
			return sess, nil
		}
		sess.Status = to
		return sess, Touch(ctx, tx, sess, now)
	})
}

// Delete removes a session and everything in it, then its workspace directory.
func (s *Service) Delete(ctx context.Context, id string, opt carryon.WriteOptions) error {
	key := opt.RequestID
	opt.RequestID = ""
	_, err := Write(ctx, s, "session.delete", id, key, opt, func(tx store.Tx, own string, now time.Time) (struct{}, error) {
		sess, err := tx.GetSession(ctx, own, id)
		if err != nil {
			return struct{}{}, err
		}
		if err := checkVersion(sess, opt.ExpectedVersion); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, tx.DeleteSession(ctx, own, id)
	})
	if err == nil {
		s.removeWorkspace(id) // after the commit: a failed delete keeps its files
	}
	return err
}

func validTitle(t string) error {
	if err := carryon.CheckText("title", t); err != nil {
		return err
	}
	if len(t) > maxTitleLen {
		return carryon.Errorf(carryon.EINVALID, "title is %d bytes; the limit is %d", len(t), maxTitleLen)
	}
	return nil
}

func validMetadata(m json.RawMessage) error {
	if m == nil {
		return nil
	}
	if len(m) > maxMetadataLen {
		return carryon.Errorf(carryon.EINVALID, "metadata is %d bytes; the limit is %d", len(m), maxMetadataLen)
	}
	var obj map[string]json.RawMessage // raw: a number too large for a float is CheckJSONText's to name
	if err := json.Unmarshal(m, &obj); err != nil || obj == nil {
		return carryon.Errorf(carryon.EINVALID, "metadata must be a JSON object")
	}
	return carryon.CheckJSONText("metadata", m)
}

func validTTL(ttl int64) error {
	if ttl < minIdleTTL || ttl > maxIdleTTL {
		return carryon.Errorf(carryon.EINVALID, "idle_ttl_seconds must be between %d and %d, not %d", minIdleTTL, maxIdleTTL, ttl)
	}
	return nil
}

func pageLimit(n int) (int, error) {
	switch {
	case n == 0:
		return defaultPageSize, nil
	case n < 0 || n > carryon.MaxMessageWindow:
		return 0, carryon.Errorf(carryon.EINVALID, "limit must be between 1 and %d, not %d", carryon.MaxMessageWindow, n)
	}
	return n, nil
}

// compactJSON drops the insignificant whitespace of a JSON value and keeps everything else as
// it was written: numbers in particular are never rounded through float64.
func compactJSON(m json.RawMessage) json.RawMessage {
	if m == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, m); err != nil {
		return m
	}
	return b.Bytes()
}

func nonNil(wm carryon.WorkingMemory) carryon.WorkingMemory {
	if wm == nil {
		return carryon.WorkingMemory{}
	}
	return wm
}

// EncodeCursor makes a keyset cursor from the last item's time and id, base64url-encoded.
func EncodeCursor(t time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.UnixMicro(), 10) + "|" + id))
}

// DecodeCursor reads a cursor made by EncodeCursor; EINVALID for anything else.
func DecodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", badCursor(c)
	}
	ts, id, ok := strings.Cut(string(b), "|")
	us, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", badCursor(c)
	}
	return time.UnixMicro(us).UTC(), id, nil
}
