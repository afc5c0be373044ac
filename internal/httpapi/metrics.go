package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the HTTP metrics of a server. Labels are bounded: route is a route pattern (or
// "unmatched"), method one of the known methods (or "OTHER").
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	refused  *prometheus.CounterVec
}

// newRegistry returns a registry with the Go runtime and process collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// newMetrics registers the HTTP metrics with reg, reusing them when another server registered them
// already.
func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "carryon_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
	}
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "carryon_limit_refusals_total",
		Help: "Requests the per-user limits refused at the gate, by limit: requests (in flight), streams, rate, quota.",
	}, []string{"limit"})
	m.requests = register(reg, m.requests)
	m.duration = register(reg, m.duration)
	m.refused = register(reg, m.refused)
	return m
}

// register registers c, or returns the collector already registered under its description.
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}

// observe records one served request.
func (m *metrics) observe(route, method string, status int, d time.Duration) {
	switch method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
	default:
		method = "OTHER"
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route, method).Observe(d.Seconds())
}

// handleMetrics serves the registry in the Prometheus exposition format.
func (s *server) handleMetrics() http.HandlerFunc {
	h := promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{Registry: s.registry})
	return h.ServeHTTP
}
