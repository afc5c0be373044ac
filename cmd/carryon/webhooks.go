package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/carryon-hub/carryon/client"
)

const webhooksUsage = `usage: carryon webhooks COMMAND [flags]
  create --url URL --events TYPE,... [--session ID]
                                  subscribe a URL to events; prints the signing secret, once
  ls                              the key's user's webhooks, oldest first
  get ID                          a webhook (never its secret)
  pause ID | resume ID            hold new and queued deliveries, send them again
  rm ID                           delete a webhook and its delivery log
  rotate ID [--previous-valid DURATION]
                                  a new signing secret, printed once; the previous one keeps
                                  signing for DURATION (default 24h, 0 ends it now, at most 168h)
  deliveries ID [--limit N]       the delivery log, newest first (--limit: at most N entries)
  redeliver ID DELIVERY_ID        queue a delivery again, now, with the same webhook-id
  Every command takes --json to print the server's answer as JSON. The key's user's webhooks,
  on a server (--server, --key). docs/WEBHOOKS.md lists the event types and how deliveries are
  signed and retried.

Examples:
  carryon webhooks create --url https://example.com/carryon --events run.completed,run.failed
  carryon webhooks create --url https://example.com/carryon --events run.requires_action --session sess_...
  carryon webhooks deliveries wh_...
  carryon webhooks redeliver wh_... dlv_...
  carryon webhooks rotate wh_... --previous-valid 1h`

func runWebhooks(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("webhooks", webhooksUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	hookURL := fs.String("url", "", "the URL that receives the deliveries (create)")
	events := fs.String("events", "", "the event types, comma-separated, such as run.completed,run.failed (create)")
	session := fs.String("session", "", "only this session's events (create)")
	prevValid := fs.Duration("previous-valid", -1, "how long the previous secret keeps signing; default 24h (rotate)")
	limit := fs.Int("limit", 0, "at most this many entries, newest first; default all (deliveries)")
	asJSON := fs.Bool("json", false, "print the server's answer as JSON")
	if len(args) == 0 {
		return fs.misuse()
	} else if isHelp(args[0]) {
		return fs.help()
	}
	pos, err := fs.parse(getenv, args[1:])
	if err != nil {
		return err
	}
	cmd := args[0]
	want := map[string]int{"create": 0, "ls": 0, "get": 1, "pause": 1, "resume": 1, "rm": 1, "rotate": 1, "deliveries": 1, "redeliver": 2}
	if n, ok := want[cmd]; !ok || len(pos) != n {
		return fs.misuse()
	}
	if *limit < 0 {
		return usagef("--limit must be 0 or more")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	wh := c.Webhooks()
	show := func(h *client.Webhook, err error) error {
		if err != nil {
			return err
		}
		if *asJSON || cmd == "get" {
			return printJSON(stdout, h)
		}
		return printWebhook(stdout, h)
	}
	switch cmd {
	case "create":
		if *hookURL == "" || *events == "" {
			return usagef("create needs --url and --events")
		}
		var types []string
		for _, e := range strings.Split(*events, ",") {
			if e = strings.TrimSpace(e); e != "" {
				types = append(types, e)
			}
		}
		return show(wh.Create(ctx, client.NewWebhook{URL: *hookURL, Events: types, SessionID: *session}))
	case "ls":
		list, err := wh.List(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, list)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tSESSION\tEVENTS\tURL")
		for _, h := range list.Items {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.ID, webhookStatus(h), orDash(h.SessionID), strings.Join(h.Events, ","), h.URL)
		}
		return tw.Flush()
	case "get":
		return show(wh.Get(ctx, pos[0]))
	case "pause", "resume":
		p := cmd == "pause"
		return show(wh.Update(ctx, pos[0], client.WebhookPatch{Paused: &p}))
	case "rm":
		if err := wh.Delete(ctx, pos[0]); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, map[string]any{"id": pos[0], "deleted": true})
		}
		_, err := fmt.Fprintf(stdout, "deleted %s\n", pos[0])
		return err
	case "rotate":
		var in client.WebhookRotate
		if *prevValid >= 0 {
			if *prevValid%time.Second != 0 {
				return usagef("--previous-valid must be whole seconds, such as 90s or 1h")
			}
			secs := int64(*prevValid / time.Second)
			in.PreviousValidSeconds = &secs
		}
		return show(wh.Rotate(ctx, pos[0], in))
	case "deliveries":
		return listDeliveries(ctx, wh, pos[0], *limit, *asJSON, stdout)
	case "redeliver":
		d, err := wh.Redeliver(ctx, pos[0], pos[1])
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, d)
		}
		_, err = fmt.Fprintf(stdout, "%s %s %s queued again\n", d.ID, d.EventType, d.EventID)
		return err
	}
	return fs.misuse()
}

// listDeliveries prints a webhook's delivery log, newest first, up to limit entries (0: all).
func listDeliveries(ctx context.Context, wh *client.WebhookClient, id string, limit int, asJSON bool, stdout io.Writer) error {
	all := &client.WebhookDeliveryPage{Items: []*client.WebhookDelivery{}}
	for cursor := ""; ; {
		n := listPageSize
		if limit > 0 {
			n = min(n, limit-len(all.Items))
		}
		page, err := wh.Deliveries(ctx, id, cursor, n)
		if err != nil {
			return err
		}
		all.Items = append(all.Items, page.Items...)
		if page.NextCursor == "" || page.NextCursor == cursor || (limit > 0 && len(all.Items) >= limit) {
			break
		}
		cursor = page.NextCursor
	}
	if asJSON {
		return printJSON(stdout, all)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEVENT\tTYPE\tSTATUS\tATTEMPTS\tCODE\tLAST ERROR")
	for _, d := range all.Items {
		code := "-"
		if d.ResponseCode != 0 {
			code = fmt.Sprint(d.ResponseCode)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", d.ID, d.EventID, d.EventType, d.Status, d.Attempts, code, orDash(d.LastError))
	}
	return tw.Flush()
}

func webhookStatus(h *client.Webhook) string {
	if h.Paused {
		return "paused"
	}
	return "active"
}

// printWebhook prints a webhook on a line, then its secret when the answer holds it (create,
// rotate): the one time it is shown.
func printWebhook(w io.Writer, h *client.Webhook) error {
	scope := "every session"
	if h.SessionID != "" {
		scope = h.SessionID
	}
	if _, err := fmt.Fprintf(w, "%s %s %s on %s -> %s\n", h.ID, webhookStatus(h), strings.Join(h.Events, ","), scope, h.URL); err != nil {
		return err
	}
	if h.PreviousSecretExpiresAt != nil {
		if _, err := fmt.Fprintf(w, "the previous secret signs until %s\n", timeText(h.PreviousSecretExpiresAt)); err != nil {
			return err
		}
	}
	if h.Secret != "" {
		_, err := fmt.Fprintf(w, "secret: %s\n(shown this once: store it where your receiver reads it)\n", h.Secret)
		return err
	}
	return nil
}
