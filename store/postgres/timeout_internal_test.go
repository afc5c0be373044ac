package postgres

import (
	"net/url"
	"testing"

	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/store"
)

// TestIdleInTransactionTimeout: carryon's connections end a transaction left idle (a process
// paused inside it) after IdleInTransactionTimeout, unless the dsn sets its own.
func TestIdleInTransactionTimeout(t *testing.T) {
	dsn := pgtest.NewSchema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("idle_in_transaction_session_timeout", "3min")
	u.RawQuery = q.Encode()
	for _, c := range []struct{ dsn, want string }{{dsn, IdleInTransactionTimeout}, {u.String(), "3min"}} {
		db, err := Open(t.Context(), c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = db.Read(t.Context(), func(st store.Tx) error {
			return st.(*tx).Conn.QueryRow(t.Context(), `SHOW idle_in_transaction_session_timeout`).Scan(&got)
		})
		db.Close()
		if err != nil || got != c.want {
			t.Errorf("idle_in_transaction_session_timeout = %q (%v), want %q", got, err, c.want)
		}
	}
}
