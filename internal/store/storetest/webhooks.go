package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// testWebhooks checks the webhooks and their outbox: owner scoping, the subscription match of
// EnqueueWebhookEvent (owner-wide and per session, by event type, not when paused, once per
// event id), claims that lease and skip what another claim holds, an attempt's outcome stored
// only under the lease its claim took, and the deletions that take
// the deliveries with them (webhook, session, user).
func testWebhooks(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	ctx := t.Context()
	write(t, st, func(tx store.Tx) error {
		for _, u := range []string{"usr_wa", "usr_wb"} {
			if err := tx.InsertUser(ctx, &carryon.User{ID: u, Name: u, CreatedAt: at(0)}); err != nil {
				return err
			}
		}
		return nil
	})
	s1, s2 := newSession("usr_wa", "sess_w1", at(0)), newSession("usr_wa", "sess_w2", at(0))
	insertSession(t, st, s1)
	insertSession(t, st, s2)
	insertSession(t, st, newSession("usr_wb", "sess_wb", at(0)))
	all := &store.Webhook{ID: "wh_all", OwnerID: "usr_wa", URL: "https://example.com/a", Events: []string{"run.completed", "run.failed"},
		Secret: "whsec_a", CreatedAt: at(1), UpdatedAt: at(1)}
	one := &store.Webhook{ID: "wh_one", OwnerID: "usr_wa", SessionID: "sess_w1", URL: "https://example.com/b", Events: []string{"run.completed"},
		Secret: "whsec_b", CreatedAt: at(2), UpdatedAt: at(2)}
	write(t, st, func(tx store.Tx) error {
		if err := tx.InsertWebhook(ctx, all); err != nil {
			return err
		}
		return tx.InsertWebhook(ctx, one)
	})
	write(t, st, func(tx store.Tx) error {
		// Another user's session is not found, and stores nothing.
		wantCode(t, tx.InsertWebhook(ctx, &store.Webhook{ID: "wh_x", OwnerID: "usr_wb", SessionID: "sess_w1", URL: "https://x", Events: []string{"run.failed"}, Secret: "s", CreatedAt: at(3), UpdatedAt: at(3)}), carryon.ENOTFOUND)
		return nil
	})
	read(t, st, func(tx store.Tx) error {
		_, err := tx.GetWebhook(ctx, "usr_wb", "wh_all")
		wantCode(t, err, carryon.ENOTFOUND)
		got, err := tx.GetWebhook(ctx, "usr_wa", "wh_one")
		if err != nil || got.SessionID != "sess_w1" || len(got.Events) != 1 || got.Events[0] != "run.completed" || got.Secret != "whsec_b" || got.Paused {
			t.Errorf("get: %+v %v", got, err)
		}
		ws, err := tx.ListWebhooks(ctx, "usr_wa")
		if err != nil || len(ws) != 2 || ws[0].ID != "wh_all" {
			t.Errorf("list: %v %v", ws, err)
		}
		return nil
	})
	enqueue := func(sess, typ, id string, want int) {
		t.Helper()
		write(t, st, func(tx store.Tx) error {
			n, err := tx.EnqueueWebhookEvent(ctx, store.WebhookEvent{OwnerID: "usr_wa", SessionID: sess, Type: typ, ID: id, Payload: []byte(`{"type":"` + typ + `"}`), At: at(10)})
			if err == nil && n != want {
				t.Errorf("event %s of %s queued for %d webhooks, want %d", typ, sess, n, want)
			}
			return err
		})
	}
	enqueue("sess_w1", "run.completed", "evt_1", 2) // both
	enqueue("sess_w2", "run.completed", "evt_2", 1) // the owner-wide one only
	enqueue("sess_w1", "run.failed", "evt_3", 1)    // the owner-wide one only
	enqueue("sess_w1", "run.requires_action", "evt_4", 0)
	enqueue("sess_w1", "run.completed", "evt_1", 2) // the same event again: no second row
	read(t, st, func(tx store.Tx) error {
		ds, err := tx.ListDeliveries(ctx, "usr_wa", "wh_all", "", 0)
		if err != nil || len(ds) != 3 {
			t.Fatalf("deliveries of wh_all: %v %v", ds, err)
		}
		if ds[0].Status != store.DeliveryPending || !ds[0].NextAttemptAt.Equal(at(10)) || ds[0].Attempts != 0 {
			t.Errorf("delivery %+v", ds[0])
		}
		_, err = tx.ListDeliveries(ctx, "usr_wb", "wh_all", "", 0)
		wantCode(t, err, carryon.ENOTFOUND)
		due, err := tx.NextDeliveryDue(ctx, at(5))
		if err != nil || due == nil || !due.Equal(at(10)) {
			t.Errorf("next due %v %v, want %v", due, err, at(10))
		}
		n, err := tx.OutboxDepth(ctx)
		if err != nil || n != 4 {
			t.Errorf("outbox depth %d %v, want 4", n, err)
		}
		return nil
	})

	// Claims lease what is due; concurrent claims take different rows.
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				ds, err := tx.ClaimDeliveries(ctx, at(11), "inst", at(60), 1)
				if err != nil {
					return err
				}
				mu.Lock()
				for _, d := range ds {
					claimed[d.ID]++
				}
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(claimed) != 4 {
		t.Errorf("4 claims took %v, want the 4 deliveries once each", claimed)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("delivery %s claimed %d times", id, n)
		}
	}
	write(t, st, func(tx store.Tx) error {
		ds, err := tx.ClaimDeliveries(ctx, at(12), "inst", at(60), 10)
		if err != nil || len(ds) != 0 {
			t.Errorf("claim while leased: %v %v", ds, err)
		}
		due, err := tx.NextDeliveryDue(ctx, at(12))
		if err != nil || due != nil {
			t.Errorf("next due while leased: %v %v", due, err)
		}
		ds, err = tx.ClaimDeliveries(ctx, at(61), "other", at(120), 10) // the leases ran out
		if err != nil || len(ds) != 4 {
			t.Fatalf("claim after the leases: %v %v", ds, err)
		}
		d := ds[0]
		now := at(62)
		d.Status, d.Attempts, d.ResponseCode, d.LeaseOwner, d.LeaseExpiresAt, d.DeliveredAt, d.UpdatedAt = store.DeliveryDelivered, 1, 204, "", nil, &now, now
		// The outcome of an attempt whose lease ran out (inst's, which other's claim replaced)
		// changes nothing; the lease the row holds records it.
		if err := tx.RecordAttempt(ctx, d, "inst", at(60)); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("record with a lost lease: %v, want ErrLeaseLost", err)
		}
		if got, err := tx.GetDelivery(ctx, "usr_wa", d.WebhookID, d.ID); err != nil || got.Status != store.DeliveryPending || got.Attempts != 0 ||
			got.LeaseOwner != "other" || got.LeaseExpiresAt == nil || !got.LeaseExpiresAt.Equal(at(120)) {
			t.Errorf("after a record with a lost lease: %+v %v", got, err)
		}
		missing := *d
		missing.ID = "whd_missing"
		wantCode(t, tx.RecordAttempt(ctx, &missing, "other", at(120)), carryon.ENOTFOUND)
		if err := tx.RecordAttempt(ctx, d, "other", at(120)); err != nil {
			return err
		}
		got, err := tx.GetDelivery(ctx, "usr_wa", d.WebhookID, d.ID)
		if err != nil || got.Status != store.DeliveryDelivered || got.ResponseCode != 204 || got.DeliveredAt == nil || got.LeaseExpiresAt != nil {
			t.Errorf("updated delivery %+v %v", got, err)
		}
		// Paused: its pending deliveries are not claimed, and no new event is queued for it.
		all.Paused, all.UpdatedAt = true, at(63)
		if err := tx.UpdateWebhook(ctx, all); err != nil {
			return err
		}
		ds, err = tx.ClaimDeliveries(ctx, at(200), "inst", at(300), 10)
		for _, d := range ds {
			if d.WebhookID == "wh_all" {
				t.Errorf("claimed %s of a paused webhook", d.ID)
			}
		}
		return err
	})
	enqueue("sess_w2", "run.failed", "evt_5", 0)

	// Deleting a session deletes its deliveries; deleting a webhook or its user deletes the rest.
	write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, "usr_wa", "sess_w1") })
	read(t, st, func(tx store.Tx) error {
		_, err := tx.GetWebhook(ctx, "usr_wa", "wh_one")
		wantCode(t, err, carryon.ENOTFOUND)
		ds, err := tx.ListDeliveries(ctx, "usr_wa", "wh_all", "", 0)
		if err != nil || len(ds) != 1 || ds[0].SessionID != "sess_w2" {
			t.Errorf("after the session's delete: %v %v", ds, err)
		}
		return nil
	})
	write(t, st, func(tx store.Tx) error {
		wantCode(t, tx.DeleteWebhook(ctx, "usr_wb", "wh_all"), carryon.ENOTFOUND)
		return tx.DeleteWebhook(ctx, "usr_wa", "wh_all")
	})
	read(t, st, func(tx store.Tx) error {
		n, err := tx.OutboxDepth(ctx)
		if err != nil || n != 0 {
			t.Errorf("outbox depth after the deletes: %d %v", n, err)
		}
		return nil
	})

	// A forgotten user's webhooks and deliveries go with the user's row.
	write(t, st, func(tx store.Tx) error {
		w := &store.Webhook{ID: "wh_b", OwnerID: "usr_wb", URL: "https://example.com/b", Events: []string{"run.failed"}, Secret: "whsec_c", CreatedAt: at(70), UpdatedAt: at(70)}
		if err := tx.InsertWebhook(ctx, w); err != nil {
			return err
		}
		_, err := tx.EnqueueWebhookEvent(ctx, store.WebhookEvent{OwnerID: "usr_wb", Type: "run.failed", ID: "evt_b", Payload: []byte(`{}`), At: at(70)})
		return err
	})
	write(t, st, func(tx store.Tx) error {
		if err := tx.DeleteSession(ctx, "usr_wb", "sess_wb"); err != nil {
			return err
		}
		if _, err := tx.MarkForgetting(ctx, "usr_wb", at(71)); err != nil {
			return err
		}
		_, err := tx.DeleteForgottenUser(ctx, "usr_wb")
		return err
	})
	read(t, st, func(tx store.Tx) error {
		ws, err := tx.ListWebhooks(ctx, "usr_wb")
		if err != nil || len(ws) != 0 {
			t.Errorf("a forgotten user's webhooks: %v %v", ws, err)
		}
		n, err := tx.OutboxDepth(ctx)
		if err != nil || n != 0 {
			t.Errorf("outbox depth after the forget: %d %v", n, err)
		}
		return nil
	})
}
