package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes that mean the database cannot serve carryon right now, whatever the statement.
const (
	codeAdminShutdown    = "57P01" // the server is shutting down (fast or immediate stop)
	codeCrashShutdown    = "57P02" // another backend crashed and the server is resetting
	codeCannotConnectNow = "57P03" // the server is starting up, shutting down or in recovery
	codeReadOnlyTx       = "25006" // a write reached a standby: the primary failed over
)

// unavailable returns store.Unavailable(err) when err is a connection-level fault rather than
// anything the statement did: a connection that could not be made (refused, timed out, a server
// starting up), one that broke (reset, broken pipe, EOF), a server shutting down, a write that
// reached a read-only server after a failover, or a transaction that outlived the driver's own
// deadline (txCtx done while the caller's ctx is not). Anything else is returned as it is.
func unavailable(ctx, txCtx context.Context, err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	if connectionFault(err) {
		return store.Unavailable(err)
	}
	if txCtx != nil && ctx.Err() == nil && txCtx.Err() != nil {
		// The caller is still waiting, but the database did not answer within the driver's
		// transaction deadline: a stalled server or network.
		return store.Unavailable(err)
	}
	return err
}

// connectionFault reports whether err says the connection to the database, not the statement,
// failed.
func connectionFault(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeAdminShutdown, codeCrashShutdown, codeCannotConnectNow, codeReadOnlyTx:
			return true
		}
		return len(pe.Code) == 5 && pe.Code[:2] == "08" // class 08: connection exception
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNABORTED) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	// pgx reports a connection it closed after an earlier failure in its own words.
	return pgconn.SafeToRetry(err) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}
