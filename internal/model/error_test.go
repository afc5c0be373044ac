package model_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model"
)

func TestRetryableStatus(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]bool{
		408: true, 409: true, 429: true, 500: true, 502: true, 503: true, 504: true, 529: true,
		400: false, 401: false, 403: false, 404: false, 422: false, 501: false, 200: false,
	} {
		if got := model.RetryableStatus(status); got != want {
			t.Errorf("RetryableStatus(%d) = %v, want %v", status, got, want)
		}
		e := model.StatusError("p", status, "", nil, nil)
		if model.IsRetryable(e) != want || e.Message != http.StatusText(status) {
			t.Errorf("StatusError(%d) = %#v", status, e)
		}
	}
}

func TestIsRetryable(t *testing.T) {
	t.Parallel()
	timeout := &net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"nil":                {nil, false},
		"canceled":           {context.Canceled, false},
		"wrapped canceled":   {fmt.Errorf("x: %w", context.Canceled), false},
		"retryable Error":    {&model.Error{Retryable: true}, true},
		"wrapped Error":      {fmt.Errorf("step: %w", &model.Error{Retryable: true}), true},
		"fatal Error":        {&model.Error{Status: 401}, false},
		"timeout":            {timeout, true},
		"connection reset":   {&net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		"connection refused": {&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		"unexpected EOF":     {io.ErrUnexpectedEOF, true},
		"other":              {errors.New("boom"), false},
	} {
		if got := model.IsRetryable(tc.err); got != tc.want {
			t.Errorf("%s: IsRetryable = %v, want %v", name, got, tc.want)
		}
	}
}

func TestTransportError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if e := model.TransportError(ctx, "p", io.ErrUnexpectedEOF, false); !e.Retryable || !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Errorf("EOF before any delta: %#v", e)
	}
	if e := model.TransportError(ctx, "p", io.ErrUnexpectedEOF, true); e.Retryable {
		t.Errorf("EOF after a delta must not be retryable: %#v", e)
	}
	if e := model.TransportError(ctx, "p", syscall.ECONNREFUSED, false); !e.Retryable {
		t.Errorf("refused: %#v", e)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	e := model.TransportError(cancelled, "p", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, false)
	if e.Retryable || model.IsRetryable(e) || !errors.Is(e, context.Canceled) {
		t.Errorf("a done context makes any failure final: %#v", e)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		header http.Header
		want   time.Duration
	}{
		{nil, 0},
		{http.Header{"Retry-After": {"0"}}, 0},
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"Mon, 02 Jan 2006 15:04:05 GMT"}}, 0},
	} {
		if got := model.ParseRetryAfter(tc.header); got != tc.want {
			t.Errorf("ParseRetryAfter(%v) = %v, want %v", tc.header, got, tc.want)
		}
	}
	future := http.Header{"Retry-After": {time.Now().Add(time.Minute).UTC().Format(http.TimeFormat)}}
	if got := model.ParseRetryAfter(future); got < 50*time.Second || got > time.Minute {
		t.Errorf("HTTP date a minute ahead: %v", got)
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	e := &model.Error{Provider: "openai", Status: 429, Message: "slow down", RetryAfter: 2 * time.Second}
	if got := e.Error(); got != "model: openai: status 429: slow down (retry after 2s)" {
		t.Errorf("Error() = %q", got)
	}
}
