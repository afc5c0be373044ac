package sqlq

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

const webhookCols = `id, owner_id, session_id, url, events, secret, prev_secret, prev_secret_until, paused, created_at, updated_at`

// eventsText is the stored form of a webhook's event types: between commas, so that one LIKE
// finds a type (",run.completed,run.failed,"). The _ of a type is a LIKE wildcard, which
// matches itself too: no two event types differ only where one has an _.
func eventsText(events []string) string { return "," + strings.Join(events, ",") + "," }

func scanWebhook(r Row) (*store.Webhook, error) {
	var w store.Webhook
	var session *string
	var events string
	var until *int64
	var paused int64
	var created, updated int64
	if err := r.Scan(&w.ID, &w.OwnerID, &session, &w.URL, &events, &w.Secret, &w.PrevSecret, &until, &paused, &created, &updated); err != nil {
		return nil, err
	}
	w.SessionID = Text(session)
	for _, e := range strings.Split(strings.Trim(events, ","), ",") {
		if e != "" {
			w.Events = append(w.Events, e)
		}
	}
	w.PrevSecretUntil, w.Paused = TimePtr(until), paused != 0
	w.CreatedAt, w.UpdatedAt = FromMicros(created), FromMicros(updated)
	return &w, nil
}

// InsertWebhook implements store.Webhooks.
func (t *Tx) InsertWebhook(ctx context.Context, w *store.Webhook) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if w.SessionID != "" {
		if err := t.ownSession(ctx, w.OwnerID, w.SessionID); err != nil {
			return err
		}
	}
	_, err := t.Conn.Exec(ctx, `INSERT INTO webhooks (`+webhookCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.OwnerID, NullText(w.SessionID), w.URL, eventsText(w.Events), w.Secret, w.PrevSecret,
		NullMicros(w.PrevSecretUntil), boolInt(w.Paused), Micros(w.CreatedAt), Micros(w.UpdatedAt))
	return t.Conflict(err, "insert webhook", "webhook %s exists", w.ID)
}

// GetWebhook implements store.Webhooks.
func (t *Tx) GetWebhook(ctx context.Context, owner, id string) (*store.Webhook, error) {
	w, err := scanWebhook(t.Conn.QueryRow(ctx, `SELECT `+webhookCols+` FROM webhooks WHERE id = ? AND owner_id = ?`, id, owner))
	if errors.Is(err, ErrNoRows) {
		return nil, NotFound("webhook", id)
	}
	return w, t.Wrap(err, "get webhook")
}

// ListWebhooks implements store.Webhooks.
func (t *Tx) ListWebhooks(ctx context.Context, owner string) ([]*store.Webhook, error) {
	return scanAll(t, ctx, "list webhooks", scanWebhook,
		`SELECT `+webhookCols+` FROM webhooks WHERE owner_id = ? ORDER BY created_at, id`, owner)
}

// UpdateWebhook implements store.Webhooks.
func (t *Tx) UpdateWebhook(ctx context.Context, w *store.Webhook) error {
	if err := t.Writable(); err != nil {
		return err
	}
	n, err := t.Conn.Exec(ctx, `UPDATE webhooks SET url = ?, events = ?, secret = ?, prev_secret = ?, prev_secret_until = ?,
		paused = ?, updated_at = ? WHERE id = ? AND owner_id = ?`,
		w.URL, eventsText(w.Events), w.Secret, w.PrevSecret, NullMicros(w.PrevSecretUntil), boolInt(w.Paused),
		Micros(w.UpdatedAt), w.ID, w.OwnerID)
	if err != nil {
		return t.Wrap(err, "update webhook")
	}
	if n == 0 {
		return NotFound("webhook", w.ID)
	}
	return nil
}

// DeleteWebhook implements store.Webhooks.
func (t *Tx) DeleteWebhook(ctx context.Context, owner, id string) error {
	if err := t.Writable(); err != nil {
		return err
	}
	n, err := t.Conn.Exec(ctx, `DELETE FROM webhooks WHERE id = ? AND owner_id = ?`, id, owner)
	if err != nil {
		return t.Wrap(err, "delete webhook")
	}
	if n == 0 {
		return NotFound("webhook", id)
	}
	return nil
}

// EnqueueWebhookEvent implements store.Webhooks.
func (t *Tx) EnqueueWebhookEvent(ctx context.Context, e store.WebhookEvent) (int, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	ids, err := scanAll(t, ctx, "match webhooks", scanString, `SELECT id FROM webhooks
		WHERE owner_id = ? AND paused = 0 AND events LIKE ? AND (session_id IS NULL OR session_id = ?)
		ORDER BY created_at, id`, e.OwnerID, "%,"+e.Type+",%", e.SessionID)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	at := Micros(e.At)
	args := make([][]any, len(ids))
	for i, id := range ids {
		args[i] = []any{carryon.NewID("whd_"), id, e.OwnerID, NullText(e.SessionID), e.ID, e.Type, string(e.Payload),
			store.DeliveryPending, at, at, at}
	}
	if _, err := t.Conn.ExecEach(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, owner_id, session_id, event_id,
		event_type, payload, status, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (webhook_id, event_id) DO NOTHING`, args); err != nil {
		return 0, t.Wrap(err, "queue webhook deliveries")
	}
	return len(ids), nil
}

const deliveryCols = `r.id, r.webhook_id, r.owner_id, r.session_id, r.event_id, r.event_type, r.payload, r.status, r.attempts,
	r.next_attempt_at, r.retry_until, r.lease_owner, r.lease_expires_at, r.last_error, r.response_code, r.created_at, r.updated_at, r.delivered_at`

func scanDelivery(r Row) (*store.Delivery, error) {
	var d store.Delivery
	var session *string
	var payload string
	var next, created, updated int64
	var lease, delivered, until *int64
	if err := r.Scan(&d.ID, &d.WebhookID, &d.OwnerID, &session, &d.EventID, &d.EventType, &payload, &d.Status, &d.Attempts,
		&next, &until, &d.LeaseOwner, &lease, &d.LastError, &d.ResponseCode, &created, &updated, &delivered); err != nil {
		return nil, err
	}
	d.SessionID, d.Payload = Text(session), []byte(payload)
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = FromMicros(next), FromMicros(created), FromMicros(updated)
	d.LeaseExpiresAt, d.DeliveredAt, d.RetryUntil = TimePtr(lease), TimePtr(delivered), TimePtr(until)
	return &d, nil
}

// ListDeliveries implements store.Webhooks.
func (t *Tx) ListDeliveries(ctx context.Context, owner, webhookID, beforeID string, limit int) ([]*store.Delivery, error) {
	if _, err := t.GetWebhook(ctx, owner, webhookID); err != nil {
		return nil, err
	}
	if beforeID == "" {
		return scanAll(t, ctx, "list deliveries", scanDelivery, `SELECT `+deliveryCols+` FROM webhook_deliveries r
			WHERE r.webhook_id = ? AND r.owner_id = ? ORDER BY r.created_at DESC, r.id DESC`+limitArg, webhookID, owner, Limit(limit))
	}
	return scanAll(t, ctx, "list deliveries", scanDelivery, `SELECT `+deliveryCols+` FROM webhook_deliveries r
		JOIN webhook_deliveries b ON b.id = ? AND b.webhook_id = r.webhook_id
		WHERE r.webhook_id = ? AND r.owner_id = ? AND (r.created_at, r.id) < (b.created_at, b.id)
		ORDER BY r.created_at DESC, r.id DESC`+limitArg, beforeID, webhookID, owner, Limit(limit))
}

// GetDelivery implements store.Webhooks.
func (t *Tx) GetDelivery(ctx context.Context, owner, webhookID, id string) (*store.Delivery, error) {
	d, err := scanDelivery(t.Conn.QueryRow(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries r
		WHERE r.id = ? AND r.webhook_id = ? AND r.owner_id = ?`+t.lockIfWriting(t.d.LockForUpdate), id, webhookID, owner))
	if errors.Is(err, ErrNoRows) {
		return nil, NotFound("delivery", id)
	}
	return d, t.Wrap(err, "get delivery")
}

// UpdateDelivery implements store.Webhooks.
func (t *Tx) UpdateDelivery(ctx context.Context, d *store.Delivery) error {
	n, err := t.updateDelivery(ctx, d, "")
	if err == nil && n == 0 {
		return NotFound("delivery", d.ID)
	}
	return err
}

// RecordAttempt implements store.Webhooks: UpdateDelivery on the condition that the row's lease
// is still the attempt's, in the same statement, so that no claim can come in between.
func (t *Tx) RecordAttempt(ctx context.Context, d *store.Delivery, leaseOwner string, leaseUntil time.Time) error {
	n, err := t.updateDelivery(ctx, d, ` AND lease_owner = ? AND lease_expires_at = ?`, leaseOwner, Micros(leaseUntil))
	if err != nil || n > 0 {
		return err
	}
	var one int
	err = t.Conn.QueryRow(ctx, `SELECT 1 FROM webhook_deliveries WHERE id = ? AND owner_id = ?`, d.ID, d.OwnerID).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return NotFound("delivery", d.ID)
	}
	if err != nil {
		return t.Wrap(err, "record attempt")
	}
	return store.ErrLeaseLost
}

// updateDelivery stores the mutable fields of delivery d where cond (with its args) also holds,
// and returns how many rows it changed.
func (t *Tx) updateDelivery(ctx context.Context, d *store.Delivery, cond string, args ...any) (int64, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	n, err := t.Conn.Exec(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, retry_until = ?, lease_owner = ?,
		lease_expires_at = ?, last_error = ?, response_code = ?, updated_at = ?, delivered_at = ? WHERE id = ? AND owner_id = ?`+cond,
		append([]any{d.Status, d.Attempts, Micros(d.NextAttemptAt), NullMicros(d.RetryUntil), d.LeaseOwner, NullMicros(d.LeaseExpiresAt), d.LastError,
			d.ResponseCode, Micros(d.UpdatedAt), NullMicros(d.DeliveredAt), d.ID, d.OwnerID}, args...)...)
	return n, t.Wrap(err, "update delivery")
}

// ClaimDeliveries implements store.Webhooks.
func (t *Tx) ClaimDeliveries(ctx context.Context, now time.Time, leaseOwner string, leaseUntil time.Time, limit int) ([]*store.Delivery, error) {
	if err := t.Writable(); err != nil {
		return nil, err
	}
	due, err := scanAll(t, ctx, "claim deliveries", scanDelivery, `SELECT `+deliveryCols+` FROM webhook_deliveries r
		JOIN webhooks w ON w.id = r.webhook_id
		WHERE r.status = 'pending' AND r.next_attempt_at <= ? AND w.paused = 0
			AND (r.lease_expires_at IS NULL OR r.lease_expires_at < ?)
		ORDER BY r.next_attempt_at, r.created_at, r.id`+limitArg+t.d.LockToClaim, Micros(now), Micros(now), Limit(limit))
	if err != nil || len(due) == 0 {
		return nil, err
	}
	for _, d := range due {
		d.LeaseOwner, d.LeaseExpiresAt = leaseOwner, &leaseUntil
		if err := t.UpdateDelivery(ctx, d); err != nil {
			return nil, err
		}
	}
	return due, nil
}

// OutboxDepth implements store.Webhooks.
func (t *Tx) OutboxDepth(ctx context.Context) (int64, error) {
	var n int64
	err := t.Conn.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`).Scan(&n)
	return n, t.Wrap(err, "outbox depth")
}

// NextDeliveryDue implements store.Webhooks.
func (t *Tx) NextDeliveryDue(ctx context.Context, now time.Time) (*time.Time, error) {
	var due *int64
	err := t.Conn.QueryRow(ctx, `SELECT min(r.next_attempt_at) FROM webhook_deliveries r JOIN webhooks w ON w.id = r.webhook_id
		WHERE r.status = 'pending' AND w.paused = 0 AND (r.lease_expires_at IS NULL OR r.lease_expires_at < ?)`, Micros(now)).Scan(&due)
	return TimePtr(due), t.Wrap(err, "next delivery")
}
