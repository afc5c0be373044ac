package webhooks

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Webhook is a webhook as the API shows it. Secret is set only in the answers of create and
// rotate: the one time the signing secret is shown.
type Webhook struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	SessionID string   `json:"session_id,omitempty"`
	Paused    bool     `json:"paused"`
	// Secret is the signing secret (whsec_…), only in the answer of create and rotate.
	Secret string `json:"secret,omitempty"`
	// PreviousSecretExpiresAt, after a rotation, is when the previous secret stops signing.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at,omitempty"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
}

// WebhookList is the answer of GET /v1/webhooks.
type WebhookList struct {
	Items []*Webhook `json:"items"`
}

// NewWebhook is the body of POST /v1/webhooks.
type NewWebhook struct {
	// URL receives the deliveries (https unless the server allows http).
	URL string `json:"url"`
	// Events are the event types to deliver (at least one).
	Events []string `json:"events"`
	// SessionID, when set, limits the webhook to the events of that session of the caller.
	SessionID string `json:"session_id,omitempty"`
}

// WebhookPatch is the body of PATCH /v1/webhooks/{id}: the fields to change.
type WebhookPatch struct {
	URL    *string   `json:"url,omitempty"`
	Events *[]string `json:"events,omitempty"`
	// Paused stops new events from being queued and holds the queued ones while true.
	Paused *bool `json:"paused,omitempty"`
}

// Rotate is the body of POST /v1/webhooks/{id}/rotate.
type Rotate struct {
	// PreviousValidSeconds is how long the previous secret keeps signing next to the new one
	// (default 86400, 0 up to 604800); 0 ends it at once.
	PreviousValidSeconds *int64 `json:"previous_valid_seconds,omitempty"`
}

// Delivery is one entry of a webhook's delivery log.
type Delivery struct {
	ID            string          `json:"id"`
	WebhookID     string          `json:"webhook_id"`
	EventID       string          `json:"event_id"`
	EventType     string          `json:"event_type"`
	SessionID     string          `json:"session_id,omitempty"`
	Status        string          `json:"status"`
	Attempts      int             `json:"attempts"`
	NextAttemptAt *time.Time      `json:"next_attempt_at,omitempty"`
	LastError     string          `json:"last_error,omitempty"`
	ResponseCode  int             `json:"response_code,omitempty"`
	Payload       json.RawMessage `json:"payload"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
	DeliveredAt   *time.Time      `json:"delivered_at,omitempty"`
}

// DeliveryPage is the answer of GET /v1/webhooks/{id}/deliveries, newest first.
type DeliveryPage struct {
	Items []*Delivery `json:"items"`
	// NextCursor, when set, is the cursor of the next (older) page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Limits of the API.
const (
	MaxWebhooksPerUser   = 100
	MaxDeliveriesPerPage = 100
	defaultPrevValid     = 24 * time.Hour
	maxPrevValid         = 7 * 24 * time.Hour
)

// API is the webhooks calls a front door makes for the user of the context: Service, or a
// client of a carryon server (`carryon mcp`). The /v1/webhooks routes and the MCP webhook tools
// call it.
type API interface {
	Create(ctx context.Context, in NewWebhook) (*Webhook, error)
	List(ctx context.Context) (*WebhookList, error)
	Get(ctx context.Context, id string) (*Webhook, error)
	Update(ctx context.Context, id string, p WebhookPatch) (*Webhook, error)
	Rotate(ctx context.Context, id string, in Rotate) (*Webhook, error)
	Delete(ctx context.Context, id string) error
	Deliveries(ctx context.Context, id, cursor string, limit int) (*DeliveryPage, error)
	Redeliver(ctx context.Context, id, deliveryID string) (*Delivery, error)
}

var _ API = (*Service)(nil)

// Service is the webhooks API over a store: every call acts for the user of its context.
type Service struct {
	st     store.Store
	policy Policy
	now    func() time.Time
	wake   func()
}

// NewService returns the webhooks service; wake (or nil) is called after a redeliver.
func NewService(st store.Store, policy Policy, now func() time.Time, wake func()) *Service {
	if now == nil {
		now = time.Now
	}
	if wake == nil {
		wake = func() {}
	}
	return &Service{st: st, policy: policy, now: now, wake: wake}
}

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

func owner(ctx context.Context) (string, error) {
	own := carryon.UserIDFromContext(ctx)
	if own == "" {
		return "", carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
	}
	return own, nil
}

func show(w *store.Webhook, now time.Time) *Webhook {
	out := &Webhook{ID: w.ID, URL: w.URL, Events: slices.Clone(w.Events), SessionID: w.SessionID, Paused: w.Paused,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	if w.PrevSecret != "" && w.PrevSecretUntil != nil && now.Before(*w.PrevSecretUntil) {
		out.PreviousSecretExpiresAt = w.PrevSecretUntil
	}
	return out
}

func showDelivery(d *store.Delivery) *Delivery {
	out := &Delivery{ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, EventType: d.EventType, SessionID: d.SessionID,
		Status: d.Status, Attempts: d.Attempts, LastError: d.LastError, ResponseCode: d.ResponseCode,
		Payload: json.RawMessage(d.Payload), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, DeliveredAt: d.DeliveredAt}
	if d.Status == store.DeliveryPending {
		next := d.NextAttemptAt
		out.NextAttemptAt = &next
	}
	return out
}

// checkEvents refuses an empty list, an unknown type or a repeated one.
func checkEvents(events []string) error {
	if len(events) == 0 {
		return carryon.Errorf(carryon.EINVALID, "events must name at least one event type (%v)", EventTypes)
	}
	for i, e := range events {
		if !Known(e) {
			return carryon.Errorf(carryon.EINVALID, "events[%d]: unknown event type %q; the event types are %v", i, e, EventTypes)
		}
		if slices.Contains(events[:i], e) {
			return carryon.Errorf(carryon.EINVALID, "events[%d]: %s is listed twice", i, e)
		}
	}
	return nil
}

// Create stores a new webhook and returns it with its secret, the only answer that shows it.
func (s *Service) Create(ctx context.Context, in NewWebhook) (*Webhook, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkEvents(in.Events); err != nil {
		return nil, err
	}
	if err := s.policy.CheckURL(ctx, in.URL); err != nil {
		return nil, err
	}
	now := s.clock()
	w := &store.Webhook{ID: carryon.NewID("wh_"), OwnerID: own, SessionID: in.SessionID, URL: in.URL,
		Events: slices.Clone(in.Events), Secret: NewSecret(), CreatedAt: now, UpdatedAt: now}
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.LockOwner(ctx, own); err != nil {
			return err
		}
		have, err := tx.ListWebhooks(ctx, own)
		if err != nil {
			return err
		}
		if len(have) >= MaxWebhooksPerUser {
			return carryon.Errorf(carryon.ECONFLICT, "a user has at most %d webhooks; delete one first", MaxWebhooksPerUser)
		}
		if in.SessionID != "" {
			if _, err := tx.GetSession(ctx, own, in.SessionID); err != nil {
				return err
			}
		}
		return tx.InsertWebhook(ctx, w)
	})
	if err != nil {
		return nil, err
	}
	out := show(w, now)
	out.Secret = w.Secret
	return out, nil
}

// List returns the caller's webhooks, oldest first, without their secrets.
func (s *Service) List(ctx context.Context) (*WebhookList, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	var ws []*store.Webhook
	err = s.st.Read(ctx, func(tx store.Tx) error {
		ws, err = tx.ListWebhooks(ctx, own)
		return err
	})
	if err != nil {
		return nil, err
	}
	now := s.clock()
	out := &WebhookList{Items: []*Webhook{}}
	for _, w := range ws {
		out.Items = append(out.Items, show(w, now))
	}
	return out, nil
}

// Get returns one of the caller's webhooks without its secret. ENOTFOUND.
func (s *Service) Get(ctx context.Context, id string) (*Webhook, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	var w *store.Webhook
	err = s.st.Read(ctx, func(tx store.Tx) error {
		w, err = tx.GetWebhook(ctx, own, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return show(w, s.clock()), nil
}

// update changes one of the caller's webhooks with fn, in a write transaction.
func (s *Service) update(ctx context.Context, id string, fn func(w *store.Webhook, now time.Time) error) (*store.Webhook, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	var w *store.Webhook
	now := s.clock()
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		if w, err = tx.GetWebhook(ctx, own, id); err != nil {
			return err
		}
		if err := fn(w, now); err != nil {
			return err
		}
		w.UpdatedAt = now
		return tx.UpdateWebhook(ctx, w)
	})
	return w, err
}

// Update changes the URL, events or paused flag of one of the caller's webhooks.
func (s *Service) Update(ctx context.Context, id string, p WebhookPatch) (*Webhook, error) {
	if p.Events != nil {
		if err := checkEvents(*p.Events); err != nil {
			return nil, err
		}
	}
	if p.URL != nil {
		if err := s.policy.CheckURL(ctx, *p.URL); err != nil {
			return nil, err
		}
	}
	w, err := s.update(ctx, id, func(w *store.Webhook, _ time.Time) error {
		if p.URL != nil {
			w.URL = *p.URL
		}
		if p.Events != nil {
			w.Events = slices.Clone(*p.Events)
		}
		if p.Paused != nil {
			w.Paused = *p.Paused
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p.Paused != nil && !*p.Paused {
		s.wake() // the held deliveries go now
	}
	return show(w, s.clock()), nil
}

// Rotate gives one of the caller's webhooks a new secret, shown in this answer only; the
// previous one keeps signing next to it for in.PreviousValidSeconds.
func (s *Service) Rotate(ctx context.Context, id string, in Rotate) (*Webhook, error) {
	valid := defaultPrevValid
	if in.PreviousValidSeconds != nil {
		v := time.Duration(*in.PreviousValidSeconds) * time.Second
		if *in.PreviousValidSeconds < 0 || v > maxPrevValid {
			return nil, carryon.Errorf(carryon.EINVALID, "previous_valid_seconds must be from 0 to %d", int64(maxPrevValid/time.Second))
		}
		valid = v
	}
	w, err := s.update(ctx, id, func(w *store.Webhook, now time.Time) error {
		w.PrevSecret, w.Secret = w.Secret, NewSecret()
		until := now.Add(valid)
		w.PrevSecretUntil = &until
		if valid == 0 {
			w.PrevSecret, w.PrevSecretUntil = "", nil
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := show(w, s.clock())
	out.Secret = w.Secret
	return out, nil
}

// Delete removes one of the caller's webhooks and its delivery log. ENOTFOUND.
func (s *Service) Delete(ctx context.Context, id string) error {
	own, err := owner(ctx)
	if err != nil {
		return err
	}
	return s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.DeleteWebhook(ctx, own, id) })
}

// Deliveries returns a page of a webhook's delivery log, newest first, after cursor (the
// NextCursor of the previous page). ENOTFOUND for another user's webhook.
func (s *Service) Deliveries(ctx context.Context, id, cursor string, limit int) (*DeliveryPage, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > MaxDeliveriesPerPage {
		limit = MaxDeliveriesPerPage
	}
	var ds []*store.Delivery
	err = s.st.Read(ctx, func(tx store.Tx) error {
		if cursor != "" {
			if _, err := tx.GetDelivery(ctx, own, id, cursor); err != nil {
				if carryon.ErrorCode(err) == carryon.ENOTFOUND {
					return carryon.Errorf(carryon.EINVALID, "cursor %q is not a delivery of this webhook", cursor)
				}
				return err
			}
		}
		ds, err = tx.ListDeliveries(ctx, own, id, cursor, limit+1)
		return err
	})
	if err != nil {
		return nil, err
	}
	page := &DeliveryPage{Items: []*Delivery{}}
	if len(ds) > limit {
		ds = ds[:limit]
		page.NextCursor = ds[limit-1].ID
	}
	for _, d := range ds {
		page.Items = append(page.Items, showDelivery(d))
	}
	return page, nil
}

// Redeliver queues one delivery of the caller's webhook again, due now, with a fresh retry
// window, whatever its state; the receiver gets the same webhook-id. ENOTFOUND.
func (s *Service) Redeliver(ctx context.Context, id, deliveryID string) (*Delivery, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	var d *store.Delivery
	now := s.clock()
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		if d, err = tx.GetDelivery(ctx, own, id, deliveryID); err != nil {
			return err
		}
		d.Status, d.NextAttemptAt, d.RetryUntil, d.UpdatedAt = store.DeliveryPending, now, nil, now
		d.LeaseOwner, d.LeaseExpiresAt = "", nil
		return tx.UpdateDelivery(ctx, d)
	})
	if err != nil {
		return nil, err
	}
	s.wake()
	return showDelivery(d), nil
}
