package client

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"
)

// Webhook is a webhook (docs/WEBHOOKS.md). Secret is set only in the answers of Create and
// Rotate: the one time the signing secret is shown.
type Webhook struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	SessionID string   `json:"session_id,omitempty"`
	Paused    bool     `json:"paused"`
	// Secret is the signing secret (whsec_…), only in the answer of Create and Rotate.
	Secret string `json:"secret,omitempty"`
	// PreviousSecretExpiresAt, after a rotation, is when the previous secret stops signing.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at,omitempty"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
}

// WebhookList is the caller's webhooks, oldest first.
type WebhookList struct {
	Items []*Webhook `json:"items"`
}

// NewWebhook is what Create subscribes.
type NewWebhook struct {
	// URL receives the deliveries (https unless the server allows http).
	URL string `json:"url"`
	// Events are the event types to deliver (at least one), such as run.completed.
	Events []string `json:"events"`
	// SessionID, when set, limits the webhook to the events of that session of the caller.
	SessionID string `json:"session_id,omitempty"`
}

// WebhookPatch is what Update changes: the fields that are set.
type WebhookPatch struct {
	URL    *string   `json:"url,omitempty"`
	Events *[]string `json:"events,omitempty"`
	// Paused stops new events from being queued and holds the queued ones while true.
	Paused *bool `json:"paused,omitempty"`
}

// WebhookRotate is how long Rotate lets the previous secret go on signing.
type WebhookRotate struct {
	// PreviousValidSeconds is how long the previous secret keeps signing next to the new one
	// (nil: the server's default of a day; 0 ends it at once; at most 604800).
	PreviousValidSeconds *int64 `json:"previous_valid_seconds,omitempty"`
}

// WebhookDelivery is one entry of a webhook's delivery log.
type WebhookDelivery struct {
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

// WebhookDeliveryPage is a page of a delivery log, newest first.
type WebhookDeliveryPage struct {
	Items []*WebhookDelivery `json:"items"`
	// NextCursor, when set, is the cursor of the next (older) page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// WebhookClient is the caller's webhooks on a server (/v1/webhooks); get one with
// Client.Webhooks.
type WebhookClient struct{ c *Client }

// Webhooks returns the webhooks of the client's user.
func (c *Client) Webhooks() *WebhookClient { return &WebhookClient{c: c} }

// Create subscribes a URL to events (POST /v1/webhooks). The answer holds the signing secret,
// the one time it is shown.
func (w *WebhookClient) Create(ctx context.Context, in NewWebhook) (*Webhook, error) {
	var out Webhook
	if err := w.c.do(ctx, call{method: "POST", path: "/v1/webhooks", body: in}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List returns the caller's webhooks, oldest first (GET /v1/webhooks).
func (w *WebhookClient) List(ctx context.Context) (*WebhookList, error) {
	var out WebhookList
	if err := w.c.do(ctx, call{method: "GET", path: "/v1/webhooks"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get returns a webhook, without its secret (GET /v1/webhooks/{id}).
func (w *WebhookClient) Get(ctx context.Context, id string) (*Webhook, error) {
	var out Webhook
	if err := w.c.do(ctx, call{method: "GET", path: "/v1/webhooks/" + escape(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update changes a webhook's URL or events, or pauses or resumes it (PATCH /v1/webhooks/{id}).
func (w *WebhookClient) Update(ctx context.Context, id string, p WebhookPatch) (*Webhook, error) {
	var out Webhook
	if err := w.c.do(ctx, call{method: "PATCH", path: "/v1/webhooks/" + escape(id), body: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete removes a webhook and its delivery log (DELETE /v1/webhooks/{id}).
func (w *WebhookClient) Delete(ctx context.Context, id string) error {
	return w.c.do(ctx, call{method: "DELETE", path: "/v1/webhooks/" + escape(id)}, nil)
}

// Rotate gives a webhook a new signing secret, in the answer only (POST
// /v1/webhooks/{id}/rotate).
func (w *WebhookClient) Rotate(ctx context.Context, id string, in WebhookRotate) (*Webhook, error) {
	var out Webhook
	if err := w.c.do(ctx, call{method: "POST", path: "/v1/webhooks/" + escape(id) + "/rotate", body: in}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Deliveries pages through a webhook's delivery log, newest first (GET
// /v1/webhooks/{id}/deliveries); limit 0 is the server's default, cursor "" the first page.
func (w *WebhookClient) Deliveries(ctx context.Context, id, cursor string, limit int) (*WebhookDeliveryPage, error) {
	q := url.Values{}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var out WebhookDeliveryPage
	if err := w.c.do(ctx, call{method: "GET", path: "/v1/webhooks/" + escape(id) + "/deliveries", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Redeliver queues a delivery again, now, with the same webhook-id (POST
// /v1/webhooks/{id}/deliveries/{did}/redeliver).
func (w *WebhookClient) Redeliver(ctx context.Context, id, deliveryID string) (*WebhookDelivery, error) {
	var out WebhookDelivery
	if err := w.c.do(ctx, call{method: "POST", path: "/v1/webhooks/" + escape(id) + "/deliveries/" + escape(deliveryID) + "/redeliver"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
