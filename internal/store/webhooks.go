package store

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
)

// ErrLeaseLost is RecordAttempt's answer when the delivery no longer holds the attempt's lease:
// its outcome is not stored.
var ErrLeaseLost = carryon.Errorf(carryon.ECONFLICT, "lost the lease: another claim took the delivery over, so this attempt's outcome is not stored")

// Webhook is a subscription of an owner (or of one of the owner's sessions, when SessionID is
// set) to run events, delivered by POST to URL. Events is the set of event types it wants.
// Secret signs every delivery; PrevSecret, after a rotation, signs too until PrevSecretUntil.
type Webhook struct {
	ID              string
	OwnerID         string
	SessionID       string
	URL             string
	Events          []string
	Secret          string
	PrevSecret      string
	PrevSecretUntil *time.Time
	Paused          bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// WebhookEvent is an event to queue for the owner's webhooks that subscribe to Type: the
// owner's own webhooks and those of SessionID.
type WebhookEvent struct {
	OwnerID   string
	SessionID string
	Type      string
	// ID is the event's id, the same for every webhook and every attempt (webhook-id).
	ID      string
	Payload []byte
	At      time.Time
}

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Delivery is one event queued for one webhook (the outbox row) and what became of it.
type Delivery struct {
	ID            string
	WebhookID     string
	OwnerID       string
	SessionID     string
	EventID       string
	EventType     string
	Payload       []byte
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	// RetryUntil bounds the retries: set at the first attempt, cleared by a redeliver.
	RetryUntil     *time.Time
	LeaseOwner     string
	LeaseExpiresAt *time.Time
	LastError      string
	ResponseCode   int
	CreatedAt      time.Time
	UpdatedAt      time.Time
	DeliveredAt    *time.Time
}

// Webhooks stores webhooks and their deliveries (the outbox). Deleting a webhook, its session
// or its owner deletes its deliveries.
type Webhooks interface {
	// InsertWebhook stores a new webhook. ENOTFOUND when its session is not the owner's.
	InsertWebhook(ctx context.Context, w *Webhook) error
	// GetWebhook returns the owner's webhook. ENOTFOUND.
	GetWebhook(ctx context.Context, owner, id string) (*Webhook, error)
	// ListWebhooks returns the owner's webhooks, oldest first.
	ListWebhooks(ctx context.Context, owner string) ([]*Webhook, error)
	// UpdateWebhook stores the URL, events, secrets, paused flag and UpdatedAt of the owner's
	// webhook w.ID. ENOTFOUND.
	UpdateWebhook(ctx context.Context, w *Webhook) error
	// DeleteWebhook removes the owner's webhook and its deliveries. ENOTFOUND.
	DeleteWebhook(ctx context.Context, owner, id string) error
	// EnqueueWebhookEvent queues e for each unpaused webhook of e.OwnerID that subscribes to
	// e.Type and belongs to the owner or to e.SessionID, due at e.At, and returns how many it
	// queued. Without such a webhook it reads one index and writes nothing.
	EnqueueWebhookEvent(ctx context.Context, e WebhookEvent) (int, error)
	// ListDeliveries returns up to limit deliveries of the owner's webhook, newest first, with
	// created_at/id before (before, beforeID) when beforeID is set. ENOTFOUND for the webhook.
	ListDeliveries(ctx context.Context, owner, webhookID string, beforeID string, limit int) ([]*Delivery, error)
	// GetDelivery returns one delivery of the owner's webhook. ENOTFOUND.
	GetDelivery(ctx context.Context, owner, webhookID, id string) (*Delivery, error)
	// UpdateDelivery stores the status, attempts, next attempt, retry bound, lease, last error, response
	// code, delivered time and UpdatedAt of delivery d.ID of d.OwnerID. ENOTFOUND.
	UpdateDelivery(ctx context.Context, d *Delivery) error
	// RecordAttempt stores the outcome of an attempt at delivery d, the fields UpdateDelivery
	// stores, only while the delivery still holds the lease its claim gave the attempt
	// (leaseOwner until leaseUntil). When it does not (the lease ran out and another claim took
	// the row, or a redeliver reset it) it changes nothing and returns ErrLeaseLost: the newer
	// attempt's state stays. ENOTFOUND when the delivery is gone. For the system worker only.
	RecordAttempt(ctx context.Context, d *Delivery, leaseOwner string, leaseUntil time.Time) error
	// ClaimDeliveries leases to leaseOwner until leaseUntil up to limit pending deliveries, of
	// unpaused webhooks, due at now and not leased (or whose lease expired), oldest due first.
	// For the system worker only. Drivers that lock rows skip the rows other claims hold.
	ClaimDeliveries(ctx context.Context, now time.Time, leaseOwner string, leaseUntil time.Time, limit int) ([]*Delivery, error)
	// NextDeliveryDue returns when the earliest delivery that ClaimDeliveries could take at now
	// or later is due (pending, of an unpaused webhook, not leased or its lease expired at now),
	// or nil when there is none: the worker's read before a claim, so that an idle server writes
	// nothing.
	NextDeliveryDue(ctx context.Context, now time.Time) (*time.Time, error)
	// OutboxDepth returns, across owners, how many deliveries are pending (queued or being
	// retried). For the metrics only: it reads the pending deliveries' index.
	OutboxDepth(ctx context.Context) (int64, error)
}
