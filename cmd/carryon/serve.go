package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/httpapi"
	"github.com/carryon-hub/carryon/sessions"
	"github.com/carryon-hub/carryon/store"
	"github.com/carryon-hub/carryon/users"
)

func runServe(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	var sf storeFlags
	sf.register(fs, getenv)
	addr := fs.String("addr", DefaultAddr, "address to listen on (env CARRYON_ADDR)")
	idleTTL := fs.Duration("idle-ttl", carryon.DefaultIdleTTL, "idle time after which a session expires (env CARRYON_IDLE_TTL)")
	purge := fs.Duration("purge-after", carryon.DefaultPurgeAfter, "how long an expired session is kept before it is purged (env CARRYON_PURGE_AFTER)")
	idemTTL := fs.Duration("request-id-ttl", carryon.DefaultIdempotencyTTL, "how long request ids and their answers are kept (env CARRYON_REQUEST_ID_TTL)")
	sweep := fs.Duration("sweep-interval", 10*time.Minute, "how often expired sessions and request ids are swept (env CARRYON_SWEEP_INTERVAL)")
	requireVersion := fs.Bool("require-version", false, "refuse writes without an expected version with 428 (env CARRYON_REQUIRE_VERSION)")
	maxBody := fs.Int64("max-body", 4<<20, "request body limit in bytes (env CARRYON_MAX_BODY)")
	logJSON := fs.Bool("log-json", false, "log as JSON lines instead of text (env CARRYON_LOG_JSON)")
	if _, err := parseFlags(fs, getenv, args); err != nil {
		return err
	}
	var log *slog.Logger
	if *logJSON {
		log = slog.New(slog.NewJSONHandler(stderr, nil))
	} else {
		log = slog.New(slog.NewTextHandler(stderr, nil))
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	txSeconds := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "carryon_store_tx_duration_seconds", Help: "Duration of store transactions by kind (read, write) and outcome.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14),
	}, []string{"kind", "outcome"})
	reg.MustRegister(txSeconds)

	raw, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer raw.Close()
	st := store.Instrument(raw, func(kind string, d time.Duration, err error) {
		outcome := "ok"
		if err != nil {
			outcome = carryon.ErrorCode(err)
		}
		txSeconds.WithLabelValues(kind, outcome).Observe(d.Seconds())
	})

	us := users.New(st, nil)
	if _, err := us.EnsureLocalUser(ctx, sf.data); err != nil {
		return fmt.Errorf("local user: %w", err)
	}
	ss := sessions.New(st, sessions.Config{IdleTTL: *idleTTL, PurgeAfter: *purge, IdempotencyTTL: *idemTTL})
	handler := httpapi.NewServer(httpapi.Config{
		Sessions: ss, Users: us, Logger: log, Ready: raw.Ping, MaxBodyBytes: *maxBody,
		RequireVersion: *requireVersion, Registry: reg,
	})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go ss.RunSweeper(sweepCtx, *sweep, log)

	url := "http://" + ln.Addr().String()
	log.Info("carryon listening", "url", url, "data", sf.data, "version", carryon.Version)
	fmt.Fprintf(stdout, "carryon listening on %s (data %s)\n", url, sf.data)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
