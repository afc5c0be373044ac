package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// WorkerConfig holds the delivery worker's settings; zero values take the defaults.
type WorkerConfig struct {
	// Policy is checked again on every connection (the dialer's Control hook).
	Policy Policy
	// Timeout bounds one attempt: connect, TLS, request and reading the answer (default 10s).
	Timeout time.Duration
	// RetryFor bounds the retries of a delivery from its first attempt (default 24h); a delivery
	// still failing then is failed.
	RetryFor time.Duration
	// MinBackoff and MaxBackoff bound the delay before a retry, which doubles from MinBackoff
	// (default 1s) up to MaxBackoff (default 10m), with jitter (a random half of it).
	MinBackoff, MaxBackoff time.Duration
	// Interval is the longest the worker sleeps between looks at the outbox (default 1s).
	Interval time.Duration
	// Concurrency bounds the attempts in flight at once (default 8).
	Concurrency int
	// Instance names this process in leases.
	Instance string
	// Logger gets a line per failed attempt (never the secret, nor the body).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// UserAgent is sent with every delivery.
	UserAgent string
	// Registerer, when set, receives the worker's metrics (carryon_webhook_attempts_total,
	// carryon_webhook_outbox_depth).
	Registerer prometheus.Registerer
}

// maxAnswerRead bounds what is read of a receiver's answer (and kept of it in the log).
const maxAnswerRead = 4 << 10

// maxErrorText bounds the last error kept in the delivery log.
const maxErrorText = 500

// Worker delivers the outbox: one in each instance; on PostgreSQL the claims of several
// instances skip each other's rows, and a lease that runs out (its instance died mid-attempt)
// lets another take the row, so every event is delivered at least once.
type Worker struct {
	st     store.Store
	cfg    WorkerConfig
	client *http.Client
	wake   chan struct{}
	log    *slog.Logger
	// attempts counts the attempts by outcome; nil without a Registerer.
	attempts *prometheus.CounterVec
}

// NewWorker returns the delivery worker of st.
func NewWorker(st store.Store, cfg WorkerConfig) *Worker {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.RetryFor <= 0 {
		cfg.RetryFor = 24 * time.Hour
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(10*time.Minute, cfg.MinBackoff)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 8
	}
	if cfg.Instance == "" {
		cfg.Instance = carryon.NewID("inst_")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "carryon-webhooks/" + carryon.Version
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Worker{st: st, cfg: cfg, client: cfg.Policy.Client(cfg.Timeout), wake: make(chan struct{}, 1), log: log}
	if cfg.Registerer != nil {
		w.attempts = registerMetrics(cfg.Registerer, st)
	}
	return w
}

func (w *Worker) now() time.Time { return w.cfg.Now().UTC().Truncate(time.Microsecond) }

// Wake makes the worker look at the outbox now (a redeliver, or a run that just ended here).
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends. It reads when the next delivery is due and claims (a write)
// only when one is, so an idle server commits nothing.
func (w *Worker) Run(ctx context.Context) {
	for {
		var due *time.Time
		err := w.st.Read(ctx, func(tx store.Tx) error {
			var err error
			due, err = tx.NextDeliveryDue(ctx, w.now())
			return err
		})
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			w.log.Warn("the webhook outbox could not be read", "err", err)
		}
		sleep := w.cfg.Interval
		if due != nil {
			if wait := due.Sub(w.now()); wait > 0 {
				sleep = min(sleep, wait)
			} else {
				n, err := w.RunOnce(ctx)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					w.log.Warn("webhook deliveries could not be claimed", "err", err)
				}
				if n > 0 {
					continue // there may be more due
				}
			}
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-w.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// RunOnce claims the due deliveries (up to the concurrency), attempts them at once and records
// each outcome; it returns how many it attempted.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	now := w.now()
	var due []*store.Delivery
	hooks := map[string]*store.Webhook{}
	err := w.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		due, err = tx.ClaimDeliveries(ctx, now, w.cfg.Instance, now.Add(2*w.cfg.Timeout+5*time.Second), w.cfg.Concurrency)
		if err != nil {
			return err
		}
		clear(hooks)
		for _, d := range due {
			if hooks[d.WebhookID] != nil {
				continue
			}
			h, err := tx.GetWebhook(ctx, d.OwnerID, d.WebhookID)
			if err != nil {
				return err
			}
			hooks[d.WebhookID] = h
		}
		return nil
	})
	if err != nil || len(due) == 0 {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, d := range due {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.attempt(ctx, hooks[d.WebhookID], d)
		}()
	}
	wg.Wait()
	return len(due), nil
}

// attempt POSTs one delivery and records the outcome.
func (w *Worker) attempt(ctx context.Context, h *store.Webhook, d *store.Delivery) {
	start := w.now()
	code, err := w.post(ctx, h, d, start)
	if ctx.Err() != nil {
		return // shutting down: the lease runs out and the next claim tries again
	}
	now := w.now()
	leaseOwner, leaseUntil := d.LeaseOwner, *d.LeaseExpiresAt // the claim's: the outcome is stored only while the row holds them
	d.Attempts++
	d.ResponseCode, d.LastError = code, ""
	d.LeaseOwner, d.LeaseExpiresAt, d.UpdatedAt = "", nil, now
	if d.RetryUntil == nil {
		until := start.Add(w.cfg.RetryFor)
		d.RetryUntil = &until
	}
	outcome := OutcomeDelivered
	if err == nil {
		d.Status, d.DeliveredAt = store.DeliveryDelivered, &now
	} else {
		outcome = OutcomeRetry
		d.LastError = clip(err.Error(), maxErrorText)
		next := now.Add(w.backoff(d.Attempts))
		if next.After(*d.RetryUntil) {
			d.Status, outcome = store.DeliveryFailed, OutcomeFailed
		} else {
			d.NextAttemptAt = next
		}
		w.log.Warn("a webhook delivery failed", "webhook", d.WebhookID, "delivery", d.ID, "event", d.EventID,
			"attempt", d.Attempts, "status", code, "err", d.LastError, "gave_up", d.Status == store.DeliveryFailed)
	}
	if w.attempts != nil {
		w.attempts.WithLabelValues(outcome).Inc()
	}
	err = w.st.Write(context.WithoutCancel(ctx), func(ctx context.Context, tx store.Tx) error {
		return tx.RecordAttempt(ctx, d, leaseOwner, leaseUntil)
	})
	switch {
	case err == nil, carryon.ErrorCode(err) == carryon.ENOTFOUND: // gone: its webhook was deleted meanwhile
	case errors.Is(err, store.ErrLeaseLost):
		// The attempt outlived its lease and another claim took the row (or a redeliver reset
		// it): that attempt's state stands, and this outcome is dropped.
		w.log.Warn("a webhook attempt ended after its lease; its outcome is not stored", "delivery", d.ID, "event", d.EventID,
			"attempt", d.Attempts, "status", code)
	default:
		w.log.Warn("a webhook delivery's outcome could not be stored; it will be attempted again", "delivery", d.ID, "err", err)
	}
}

// backoff is the delay after the attempts-th failed attempt: MinBackoff doubled each time, up
// to MaxBackoff, of which a random half is taken off (jitter), so that receivers coming back
// are not hit by every retry at once.
func (w *Worker) backoff(attempts int) time.Duration {
	d := w.cfg.MinBackoff
	for i := 1; i < attempts && d < w.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, w.cfg.MaxBackoff)
	half := d / 2
	return half + rand.N(half+1)
}

// post sends one attempt and returns the answer's status code; an error for anything but 2xx.
func (w *Worker) post(ctx context.Context, h *store.Webhook, d *store.Delivery, now time.Time) (int, error) {
	if h.Paused {
		return 0, errors.New("the webhook is paused")
	}
	sig, err := Signatures(h, d.EventID, now, now, d.Payload)
	if err != nil {
		return 0, err
	}
	rctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, h.URL, bytes.NewReader(d.Payload))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", w.cfg.UserAgent)
	req.Header.Set("webhook-id", d.EventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	res, err := w.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(res.Body, maxAnswerRead))
	if res.StatusCode/100 == 2 {
		return res.StatusCode, nil
	}
	if loc := res.Header.Get("Location"); res.StatusCode/100 == 3 && loc != "" {
		return res.StatusCode, fmt.Errorf("answered %s to %s; redirects are not followed", res.Status, clip(loc, 200))
	}
	return res.StatusCode, fmt.Errorf("answered %s: %s", res.Status, clip(string(bytes.TrimSpace(answer)), 200))
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
