package main

import (
	"context"

	"github.com/carryon-hub/carryon/client"
	"github.com/carryon-hub/carryon/internal/webhooks"
)

// clientWebhooks is the webhooks API of `carryon mcp`: the Go client's calls to the server, in
// the types of package webhooks. The client's types have the same fields as the server's, so each
// converts as it is (a field added on one side only stops the build here).
type clientWebhooks struct{ c *client.WebhookClient }

var _ webhooks.API = clientWebhooks{}

func (w clientWebhooks) Create(ctx context.Context, in webhooks.NewWebhook) (*webhooks.Webhook, error) {
	out, err := w.c.Create(ctx, client.NewWebhook(in))
	return (*webhooks.Webhook)(out), err
}

func (w clientWebhooks) List(ctx context.Context) (*webhooks.WebhookList, error) {
	l, err := w.c.List(ctx)
	if err != nil {
		return nil, err
	}
	out := &webhooks.WebhookList{Items: []*webhooks.Webhook{}}
	for _, it := range l.Items {
		out.Items = append(out.Items, (*webhooks.Webhook)(it))
	}
	return out, nil
}

func (w clientWebhooks) Get(ctx context.Context, id string) (*webhooks.Webhook, error) {
	out, err := w.c.Get(ctx, id)
	return (*webhooks.Webhook)(out), err
}

func (w clientWebhooks) Update(ctx context.Context, id string, p webhooks.WebhookPatch) (*webhooks.Webhook, error) {
	out, err := w.c.Update(ctx, id, client.WebhookPatch(p))
	return (*webhooks.Webhook)(out), err
}

func (w clientWebhooks) Rotate(ctx context.Context, id string, in webhooks.Rotate) (*webhooks.Webhook, error) {
	out, err := w.c.Rotate(ctx, id, client.WebhookRotate(in))
	return (*webhooks.Webhook)(out), err
}

func (w clientWebhooks) Delete(ctx context.Context, id string) error { return w.c.Delete(ctx, id) }

func (w clientWebhooks) Deliveries(ctx context.Context, id, cursor string, limit int) (*webhooks.DeliveryPage, error) {
	p, err := w.c.Deliveries(ctx, id, cursor, limit)
	if err != nil {
		return nil, err
	}
	out := &webhooks.DeliveryPage{Items: []*webhooks.Delivery{}, NextCursor: p.NextCursor}
	for _, d := range p.Items {
		out.Items = append(out.Items, (*webhooks.Delivery)(d))
	}
	return out, nil
}

func (w clientWebhooks) Redeliver(ctx context.Context, id, deliveryID string) (*webhooks.Delivery, error) {
	out, err := w.c.Redeliver(ctx, id, deliveryID)
	return (*webhooks.Delivery)(out), err
}
