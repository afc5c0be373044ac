package main

import (
	"testing"

	"github.com/carryon-hub/carryon/internal/pgtest"
)

// pgDatabase creates a fresh PostgreSQL database for the test, dropped when it ends, and returns
// its URL; without CARRYON_TEST_POSTGRES_URL the test is skipped.
func pgDatabase(t *testing.T) string { return pgtest.NewDatabase(t) }

// cluster is several server processes over one PostgreSQL database, each with its own data
// directory; the first one's local admin key works on all of them (one database, one user).
type cluster struct {
	t    *testing.T
	dsn  string
	srvs []*server
	args [][]string
	env  []string
	key  string
}

// startCluster starts n instances; args[i] are extra flags of instance i.
func startCluster(t *testing.T, n int, env []string, args ...[]string) *cluster {
	t.Helper()
	c := &cluster{t: t, dsn: pgDatabase(t), env: env}
	for i := range n {
		var extra []string
		if i < len(args) {
			extra = args[i]
		}
		c.args = append(c.args, extra)
		c.srvs = append(c.srvs, c.start(i, t.TempDir()))
	}
	c.key = localKey(t, c.srvs[0].data)
	return c
}

func (c *cluster) start(i int, data string) *server {
	return startServerEnv(c.t, data, c.env, append([]string{"--db", c.dsn}, c.args[i]...)...)
}

// restart starts instance i again on its data directory after it was killed.
func (c *cluster) restart(i int) { c.srvs[i] = c.start(i, c.srvs[i].data) }
