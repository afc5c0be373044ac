// Package longterm is the hub service that owns users' long-term memory: items of JSON under a
// (namespace, key) that a user, or the agent for that user, remembers across sessions, and a
// ranked search over them. It implements carryon.LongTermService over a store.
//
// The caller is the user in the context and nothing else: there is no parameter that names
// another owner, and every store call passes the caller as the owner, so memory is never read
// into another user's session because it lives in the same database. It validates input
// (namespaces, keys, values, TTLs) and knows nothing of HTTP or SQL.
//
// Search scores are relative: the best result of a search scores 1 and the others their share of
// its relevance, so they read the same whichever driver ranked them.
package longterm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/idempotency"
	"github.com/carryon-hub/carryon/internal/store"
)

// MaxQueryBytes bounds the text of one search.
const MaxQueryBytes = 16 << 10

// FactsNamespace is where the facts learned from a session are written when a profile's
// memory_extraction names no namespace.
const FactsNamespace = "facts"

// vectorIdle is how long a user's vectors stay in memory without a search reading them.
const vectorIdle = 10 * time.Minute

// maxTTL bounds ttl_seconds (100 years).
const maxTTL = 100 * 365 * 24 * 3600

// Service implements carryon.LongTermService over a store.
type Service struct {
	st      store.Store
	now     func() time.Time
	keepID  time.Duration
	onSweep func(items int64, err error)
	// emb and vectors are set by WithEmbeddings (nil: keyword search only).
	emb     *Embeddings
	vectors *vectorCache
}

var _ carryon.LongTermService = (*Service)(nil)

// New returns a memory service over st; now is the clock (nil: time.Now).
func New(st store.Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{st: st, now: now, keepID: carryon.DefaultIdempotencyTTL}
}

// OnSweep sets a function told the outcome of every sweep RunSweeper makes (for the metrics),
// and returns s.
func (s *Service) OnSweep(fn func(items int64, err error)) *Service {
	s.onSweep = fn
	return s
}

// KeepRequestIDs sets how long request ids of puts and deletes and their answers are kept (the
// server's setting for every write; default carryon.DefaultIdempotencyTTL), and returns s.
func (s *Service) KeepRequestIDs(ttl time.Duration) *Service {
	if ttl > 0 {
		s.keepID = ttl
	}
	return s
}

// write runs fn under the request id of a put or delete (package idempotency).
func write[T any](ctx context.Context, s *Service, own, op, target, requestID string, input any, now time.Time, fn func(tx store.Tx) (T, error)) (T, error) {
	return idempotency.Write(ctx, s.st, idempotency.Request{
		Owner: own, ID: requestID, Op: op, Target: target, Input: input, Now: now, TTL: s.keepID,
	}, fn)
}

// clock returns the time in UTC at the stores' microsecond precision.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// owner returns the caller's user id, or EUNAUTHORIZED.
func owner(ctx context.Context) (string, error) {
	if id := carryon.UserIDFromContext(ctx); id != "" {
		return id, nil
	}
	return "", carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
}

var (
	namespaceRe = regexp.MustCompile(`^[a-z0-9_-]+(\.[a-z0-9_-]+)*$`)
	keyRe       = regexp.MustCompile(`^[A-Za-z0-9_.:@-]+$`)
)

// ValidNamespace checks a namespace: dot-separated segments of a-z, 0-9, _ and -, at most
// carryon.MaxLongTermNamespaceLength bytes. Empty is allowed only where it means "all" (allowEmpty).
func ValidNamespace(ns string, allowEmpty bool) error {
	switch {
	case ns == "" && allowEmpty:
		return nil
	case ns == "":
		return carryon.Errorf(carryon.EINVALID, "namespace is required: dot-separated segments of a-z, 0-9, _ and -, such as prefs or projects.alpha")
	case len(ns) > carryon.MaxLongTermNamespaceLength:
		return carryon.Errorf(carryon.EINVALID, "namespace is longer than %d bytes", carryon.MaxLongTermNamespaceLength)
	case !namespaceRe.MatchString(ns):
		return carryon.Errorf(carryon.EINVALID, "namespace %q is not valid: use dot-separated segments of a-z, 0-9, _ and -, such as prefs or projects.alpha", clip(ns))
	}
	return nil
}

// ValidKey checks a key: 1 to carryon.MaxLongTermKeyLength characters of A-Z, a-z, 0-9, _ . : @ and -.
func ValidKey(key string) error {
	switch {
	case key == "":
		return carryon.Errorf(carryon.EINVALID, "key is required")
	case len(key) > carryon.MaxLongTermKeyLength:
		return carryon.Errorf(carryon.EINVALID, "key is longer than %d characters", carryon.MaxLongTermKeyLength)
	case !keyRe.MatchString(key):
		return carryon.Errorf(carryon.EINVALID, "key %q is not valid: use A-Z, a-z, 0-9, _, ., :, @ and -", clip(key))
	}
	return nil
}

func clip(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

func validItem(ns, key string) error {
	if err := ValidNamespace(ns, false); err != nil {
		return err
	}
	return ValidKey(key)
}

// Put stores value (and text) under (namespace, key) for the caller, replacing what was there;
// a replaced item keeps its creation time. With a request id, a repeat answers the item as the
// first put stored it. EINVALID, EUNAUTHORIZED, EKEYREUSED.
func (s *Service) Put(ctx context.Context, namespace, key string, in carryon.LongTermPut) (*carryon.LongTermItem, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := validItem(namespace, key); err != nil {
		return nil, err
	}
	value, err := checkPut(&in)
	if err != nil {
		return nil, err
	}
	if err := validExpected(in.ExpectedVersion); err != nil {
		return nil, err
	}
	vec, err := s.embedItem(ctx, store.EmbeddingText(in.Text, value))
	if err != nil {
		return nil, err
	}
	now := s.clock()
	it := &carryon.LongTermItem{OwnerID: own, Namespace: namespace, Key: key, Value: value, Text: in.Text, CreatedAt: now, UpdatedAt: now}
	if in.TTLSeconds > 0 {
		exp := now.Add(time.Duration(in.TTLSeconds) * time.Second)
		it.ExpiresAt = &exp
	}
	requestID := in.RequestID
	in.RequestID = ""
	var w locked
	out, err := write(ctx, s, own, "memory.put", namespace+"/"+key, requestID, in, now, func(tx store.Tx) (*carryon.LongTermItem, error) {
		it.CreatedAt, it.Version = now, 1 // fn may run again
		if err := s.lock(ctx, tx, own, &w); err != nil {
			return nil, err
		}
		if old, err := tx.GetLongTermItem(ctx, own, namespace, key, now); err == nil {
			it.CreatedAt, it.Version = old.CreatedAt, old.Version+1
		} else if carryon.ErrorCode(err) != carryon.ENOTFOUND {
			return nil, err
		}
		if err := checkExpected(in.ExpectedVersion, it.Version-1, namespace, key); err != nil {
			return nil, err
		}
		if err := tx.PutLongTermItem(ctx, own, it); err != nil {
			return nil, err
		}
		return it, s.setVector(ctx, tx, own, it, vec, &w)
	})
	s.committed(own, &w, err)
	return out, err
}

// checkPut validates a put's value, text and TTL, and returns the value trimmed.
func checkPut(in *carryon.LongTermPut) (json.RawMessage, error) {
	value := json.RawMessage(strings.TrimSpace(string(in.Value)))
	switch {
	case len(value) == 0:
		return nil, carryon.Errorf(carryon.EINVALID, "value is required: any JSON value")
	case len(value) > carryon.MaxLongTermValueBytes:
		return nil, carryon.Errorf(carryon.EINVALID, "value is larger than %d bytes", carryon.MaxLongTermValueBytes)
	case !json.Valid(value):
		return nil, carryon.Errorf(carryon.EINVALID, "value is not valid JSON")
	case len(in.Text) > carryon.MaxLongTermTextBytes:
		return nil, carryon.Errorf(carryon.EINVALID, "text is longer than %d bytes", carryon.MaxLongTermTextBytes)
	case in.TTLSeconds < 0 || in.TTLSeconds > maxTTL:
		return nil, carryon.Errorf(carryon.EINVALID, "ttl_seconds must be between 0 (no expiry) and %d", maxTTL)
	}
	if err := carryon.CheckText("text", in.Text); err != nil {
		return nil, err
	}
	if err := carryon.CheckJSONText("value", value); err != nil {
		return nil, err
	}
	return value, nil
}

// Get returns the caller's item. ENOTFOUND (also when expired), EINVALID, EUNAUTHORIZED.
func (s *Service) Get(ctx context.Context, namespace, key string) (*carryon.LongTermItem, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := validItem(namespace, key); err != nil {
		return nil, err
	}
	var it *carryon.LongTermItem
	err = s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		it, err = tx.GetLongTermItem(ctx, own, namespace, key, s.clock())
		return err
	})
	return it, err
}

// Delete removes the caller's item. With a request id, a repeat succeeds again and removes
// nothing (an item put again since stays). ENOTFOUND (also when it had expired), EINVALID,
// EUNAUTHORIZED, EKEYREUSED.
func (s *Service) Delete(ctx context.Context, namespace, key string, opt carryon.WriteOptions) error {
	own, err := owner(ctx)
	if err != nil {
		return err
	}
	if err := validItem(namespace, key); err != nil {
		return err
	}
	if err := validExpected(opt.ExpectedVersion); err != nil {
		return err
	}
	now := s.clock()
	requestID := opt.RequestID
	opt.RequestID = ""
	var w locked
	_, err = write(ctx, s, own, "memory.delete", namespace+"/"+key, requestID, opt, now, func(tx store.Tx) (struct{}, error) {
		if err := s.lock(ctx, tx, own, &w); err != nil {
			return struct{}{}, err
		}
		old, err := tx.GetLongTermItem(ctx, own, namespace, key, now)
		if err != nil {
			return struct{}{}, err
		}
		if err := checkExpected(opt.ExpectedVersion, old.Version, namespace, key); err != nil {
			return struct{}{}, err
		}
		if err := tx.DeleteLongTermItem(ctx, own, namespace, key); err != nil {
			return struct{}{}, err
		}
		w.changes = append(w.changes, change{ns: namespace, key: key})
		return struct{}{}, s.done(ctx, tx, own, &w)
	})
	s.committed(own, &w, err)
	return err
}

// validExpected refuses an expected item version below 0 (0 names "no item yet").
func validExpected(v *int64) error {
	if v != nil && *v < 0 {
		return carryon.Errorf(carryon.EINVALID, "expected_version must be an item version, 0 (no item yet) or more, not %d", *v)
	}
	return nil
}

// checkExpected refuses a write that expects another version than the item's current one (0
// when there is none).
func checkExpected(expected *int64, current int64, namespace, key string) error {
	if expected == nil || *expected == current {
		return nil
	}
	e := carryon.Errorf(carryon.EVERSION, "expected version %d but the item %s/%s is at version %d (0: there is none); re-read it and retry", *expected, namespace, key, current)
	e.CurrentVersion = current
	return e
}

// List pages through the caller's unexpired items by (namespace, key), limited to a namespace
// subtree when f.Namespace is set. EINVALID, EUNAUTHORIZED.
func (s *Service) List(ctx context.Context, f carryon.LongTermFilter) (*carryon.LongTermPage, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := ValidNamespace(f.Namespace, true); err != nil {
		return nil, err
	}
	if f.Limit < 0 || f.Limit > carryon.MaxMessageWindow {
		return nil, carryon.Errorf(carryon.EINVALID, "limit must be between 1 and %d", carryon.MaxMessageWindow)
	}
	limit := f.Limit
	if limit == 0 {
		limit = carryon.DefaultLongTermListLimit
	}
	q := store.LongTermQuery{Namespace: f.Namespace, Now: s.clock(), Limit: limit + 1}
	if f.Cursor != "" {
		if q.AfterNamespace, q.AfterKey, err = decodeCursor(f.Cursor); err != nil {
			return nil, err
		}
	}
	var items []*carryon.LongTermItem
	var spent bool
	err = s.st.Read(ctx, func(tx store.Tx) error {
		bctx, budget := store.WithReadBudget(ctx, carryon.DefaultMaxReadBytes)
		var err error
		items, err = tx.ListLongTermItems(bctx, own, q)
		spent = budget.Spent()
		return err
	})
	if err != nil {
		return nil, err
	}
	page := &carryon.LongTermPage{Items: items}
	if len(items) > limit || spent && len(items) > 0 { // a page stops early at the read budget
		page.Items = items[:min(len(items), limit)]
		last := page.Items[len(page.Items)-1]
		page.NextCursor = encodeCursor(last.Namespace, last.Key)
	}
	return page, nil
}

func encodeCursor(ns, key string) string {
	b, _ := json.Marshal([2]string{ns, key})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(c string) (string, string, error) {
	var v [2]string
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil || validItem(v[0], v[1]) != nil {
		return "", "", carryon.Errorf(carryon.EINVALID, "cursor is not a next_cursor of this listing")
	}
	return v[0], v[1], nil
}

// Sweep removes the items of every user that have expired and returns how many. It looks in a
// read transaction first, and writes only when there is something to remove.
func (s *Service) Sweep(ctx context.Context) (int64, error) {
	now := s.clock()
	if s.vectors != nil {
		s.vectors.dropIdle(time.Now().Add(-vectorIdle))
	}
	expired := false
	if err := s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		expired, err = tx.HasExpiredLongTermItems(ctx, now)
		return err
	}); err != nil || !expired {
		return 0, err
	}
	var n int64
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		n, err = tx.PurgeExpiredLongTermItems(ctx, now)
		return err
	})
	return n, err
}

// RunSweeper sweeps every interval until ctx is done, logging what it removed.
func (s *Service) RunSweeper(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := s.Sweep(ctx)
		if s.onSweep != nil {
			s.onSweep(n, err)
		}
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("memory sweep failed", "err", err)
		case n > 0:
			log.Info("swept expired memory items", "items", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
