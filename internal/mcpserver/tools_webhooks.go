package mcpserver

import (
	"context"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/webhooks"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The arguments of the webhook tools; their JSON names are the contract. None takes request_id,
// as their /v1 routes take no Idempotency-Key (docs/MCP.md says why, tool by tool).
type (
	createWebhookArgs struct {
		URL       string   `json:"url" jsonschema:"where the signed deliveries are POSTed (https unless the server allows http)"`
		Events    []string `json:"events" jsonschema:"the event types to deliver, at least one"`
		SessionID string   `json:"session_id,omitempty" jsonschema:"only this session's events (default: every session of yours)"`
	}
	// webhookArgs are the arguments of get_webhook and delete_webhook.
	webhookArgs struct {
		WebhookID string `json:"webhook_id" jsonschema:"the webhook's id (wh_...)"`
	}
	updateWebhookArgs struct {
		WebhookID string    `json:"webhook_id" jsonschema:"the webhook's id (wh_...)"`
		URL       *string   `json:"url,omitempty" jsonschema:"the new URL"`
		Events    *[]string `json:"events,omitempty" jsonschema:"the new event types (they replace the old ones)"`
		Paused    *bool     `json:"paused,omitempty" jsonschema:"true pauses (no new events are queued, the queued ones wait), false resumes"`
	}
	rotateWebhookArgs struct {
		WebhookID            string `json:"webhook_id" jsonschema:"the webhook's id (wh_...)"`
		PreviousValidSeconds *int64 `json:"previous_valid_seconds,omitempty" jsonschema:"how long the previous secret keeps signing next to the new one (default 86400, 0 ends it at once)"`
	}
	listDeliveriesArgs struct {
		WebhookID string `json:"webhook_id" jsonschema:"the webhook's id (wh_...)"`
		Limit     int    `json:"limit,omitempty" jsonschema:"page size (default 100)"`
		Cursor    string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	}
	redeliverArgs struct {
		WebhookID  string `json:"webhook_id" jsonschema:"the webhook's id (wh_...)"`
		DeliveryID string `json:"delivery_id" jsonschema:"the delivery's id (whd_...) from list_webhook_deliveries"`
	}
)

// webhookDeleted is the result of delete_webhook.
type webhookDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// maxPrevValidSeconds is the bound of rotate_webhook_secret's previous_valid_seconds (a week),
// as the service checks it.
const maxPrevValidSeconds = 7 * 24 * 3600

// addWebhookTools registers the webhook tools, when the server has webhooks.
func (s *server) addWebhookTools(srv *mcp.Server) {
	if s.webhooks == nil {
		return
	}
	eventTypes := func(p *jsonschema.Schema) {
		p.MinItems = carryon.Ptr(1)
		p.Items.Enum = nil
		for _, e := range webhooks.EventTypes {
			p.Items.Enum = append(p.Items.Enum, e)
		}
	}
	addTool(s, srv, &mcp.Tool{
		Name: "create_webhook",
		Description: "Subscribe a URL to events of your runs (" + strings.Join(webhooks.EventTypes, ", ") + "), of every session of yours " +
			"or of one. carryon POSTs each event signed as Standard Webhooks specify. The result holds the signing secret (whsec_...): " +
			"the only time it is shown, so store it where the receiver reads it.",
		Annotations: hints("Create webhook", false, false, false),
	}, func(sc *jsonschema.Schema) { eventTypes(sc.Properties["events"]) }, s.createWebhook)
	addTool(s, srv, &mcp.Tool{
		Name:        "list_webhooks",
		Description: "List your webhooks, oldest first, without their secrets.",
		Annotations: hints("List webhooks", true, true, false),
	}, nil, func(ctx context.Context, _ struct{}) (any, error) { return s.webhooks.List(ctx) })
	addTool(s, srv, &mcp.Tool{
		Name:        "get_webhook",
		Description: "Get one of your webhooks, without its secret.",
		Annotations: hints("Get webhook", true, true, false),
	}, nil, func(ctx context.Context, in webhookArgs) (any, error) { return s.webhooks.Get(ctx, in.WebhookID) })
	addTool(s, srv, &mcp.Tool{
		Name:        "update_webhook",
		Description: "Change a webhook's URL or events, or pause or resume it: the arguments given replace what was there.",
		Annotations: hints("Update webhook", false, true, true),
	}, func(sc *jsonschema.Schema) { eventTypes(sc.Properties["events"]) }, s.updateWebhook)
	addTool(s, srv, &mcp.Tool{
		Name:        "delete_webhook",
		Description: "Delete a webhook with its queued deliveries and its delivery log. A repeat is not_found.",
		Annotations: hints("Delete webhook", false, true, true),
	}, nil, s.deleteWebhook)
	addTool(s, srv, &mcp.Tool{
		Name: "rotate_webhook_secret",
		Description: "Give a webhook a new signing secret, shown in this result only; the previous one keeps signing next to it " +
			"for previous_valid_seconds, so that a receiver with either accepts the deliveries meanwhile.",
		Annotations: hints("Rotate webhook secret", false, false, true),
	}, func(sc *jsonschema.Schema) { bound(sc, "previous_valid_seconds", 0, maxPrevValidSeconds) }, s.rotateWebhook)
	addTool(s, srv, &mcp.Tool{
		Name: "list_webhook_deliveries",
		Description: "A webhook's delivery log, newest first: each delivery's event, status (pending, delivered, failed), " +
			"attempts, next attempt, last error and response code.",
		Annotations: hints("List webhook deliveries", true, true, false),
	}, func(sc *jsonschema.Schema) { bound(sc, "limit", 1, webhooks.MaxDeliveriesPerPage) }, s.listDeliveries)
	addTool(s, srv, &mcp.Tool{
		Name: "redeliver_webhook",
		Description: "Queue one delivery of a webhook again, due now, with a fresh retry window, whatever its status; " +
			"the receiver gets the same webhook-id, by which it dedupes.",
		Annotations: hints("Redeliver webhook event", false, false, false),
	}, nil, s.redeliver)
}

func (s *server) createWebhook(ctx context.Context, in createWebhookArgs) (any, error) {
	return s.webhooks.Create(ctx, webhooks.NewWebhook{URL: in.URL, Events: in.Events, SessionID: in.SessionID})
}

func (s *server) updateWebhook(ctx context.Context, in updateWebhookArgs) (any, error) {
	return s.webhooks.Update(ctx, in.WebhookID, webhooks.WebhookPatch{URL: in.URL, Events: in.Events, Paused: in.Paused})
}

func (s *server) deleteWebhook(ctx context.Context, in webhookArgs) (any, error) {
	if err := s.webhooks.Delete(ctx, in.WebhookID); err != nil {
		return nil, err
	}
	return webhookDeleted{ID: in.WebhookID, Deleted: true}, nil
}

func (s *server) rotateWebhook(ctx context.Context, in rotateWebhookArgs) (any, error) {
	return s.webhooks.Rotate(ctx, in.WebhookID, webhooks.Rotate{PreviousValidSeconds: in.PreviousValidSeconds})
}

func (s *server) listDeliveries(ctx context.Context, in listDeliveriesArgs) (any, error) {
	return s.webhooks.Deliveries(ctx, in.WebhookID, in.Cursor, in.Limit)
}

func (s *server) redeliver(ctx context.Context, in redeliverArgs) (any, error) {
	return s.webhooks.Redeliver(ctx, in.WebhookID, in.DeliveryID)
}
