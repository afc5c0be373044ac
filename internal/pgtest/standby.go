package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/jackc/pgx/v5"
)

// Bin is where Debian's PostgreSQL 15 programs are.
const Bin = "/usr/lib/postgresql/15/bin"

// EnvRequireFailover makes the tests that need PostgreSQL's own programs (a standby, a failover
// manager) fail instead of skipping when those are missing.
const EnvRequireFailover = "CARRYON_TEST_REQUIRE_FAILOVER"

// Pair is a PostgreSQL primary and a streaming standby of it made for one test from PostgreSQL
// 15's programs (initdb, pg_basebackup), each a server of its own in a temporary directory,
// stopped when the test ends. The database carryon exists on both.
type Pair struct {
	t   testing.TB
	dir string
	// Primary and Standby are the URLs of the database carryon on each server.
	Primary, Standby string
}

// NewPair starts a primary and a standby that streams from it, skipping the test when the
// PostgreSQL programs are not installed (failing with CARRYON_TEST_REQUIRE_FAILOVER=1).
func NewPair(t testing.TB) *Pair {
	if _, err := os.Stat(filepath.Join(Bin, "pg_basebackup")); err != nil {
		if os.Getenv(EnvRequireFailover) == "1" {
			t.Fatalf("%s=1 but PostgreSQL 15's programs are not in %s", EnvRequireFailover, Bin)
		}
		t.Skipf("PostgreSQL 15's programs are not in %s (apt-get install postgresql-15); set %s=1 to fail instead", Bin, EnvRequireFailover)
	}
	// Not t.TempDir: the postgres user must be able to reach the directory.
	dir, err := os.MkdirTemp("", "carryon-standby-")
	if err != nil {
		t.Fatal(err)
	}
	p := &Pair{t: t, dir: dir}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chown", "postgres", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	t.Cleanup(func() {
		for _, node := range []string{"standby", "primary"} {
			if _, err := os.Stat(filepath.Join(dir, node, "postmaster.pid")); err == nil {
				_, _ = p.command("pg_ctl", "-D", filepath.Join(dir, node), "-m", "immediate", "-w", "stop").CombinedOutput()
			}
		}
		os.RemoveAll(dir)
	})
	primaryPort, standbyPort := freePort(t), freePort(t)
	p.run("initdb", "-D", filepath.Join(dir, "primary"), "-U", "postgres", "-A", "trust", "--no-sync")
	p.startServer("primary", primaryPort)
	admin := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", primaryPort)
	if err := execAdmin(context.Background(), admin, "CREATE DATABASE carryon"); err != nil {
		t.Fatal(err)
	}
	p.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(primaryPort), "-U", "postgres",
		"-D", filepath.Join(dir, "standby"), "-R", "-X", "stream", "-c", "fast", "--no-sync")
	p.startServer("standby", standbyPort)
	p.Primary = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/carryon?sslmode=disable", primaryPort)
	p.Standby = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/carryon?sslmode=disable", standbyPort)
	poll.Eventually(t, "the standby streams from the primary", func() bool {
		var n int
		return p.query(p.Primary, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'", &n) == nil && n == 1
	})
	return p
}

// command is a PostgreSQL program as the postgres user (when root).
func (p *Pair) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(Bin, name)
	var c *exec.Cmd
	if os.Geteuid() == 0 {
		c = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		c = exec.Command(path, args...)
	}
	c.Dir = p.dir
	return c
}

func (p *Pair) run(name string, args ...string) {
	p.t.Helper()
	if out, err := p.command(name, args...).CombinedOutput(); err != nil {
		p.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// startServer starts the server of dir/node on port, on loopback only, its log in dir/node.log.
func (p *Pair) startServer(node string, port int) {
	p.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB -c max_connections=60 -c max_wal_senders=4",
		port, p.dir)
	p.run("pg_ctl", "-D", filepath.Join(p.dir, node), "-l", filepath.Join(p.dir, node+".log"), "-o", opts, "-w", "start")
}

// query runs sql on the database at url and scans its one row into dest.
func (p *Pair) query(url, sql string, dest ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return conn.QueryRow(ctx, sql).Scan(dest...)
}

// PauseReplay stops the standby applying what it receives (pg_wal_replay_pause): it falls
// behind the primary from the primary's next commit on.
func (p *Pair) PauseReplay() { p.standbyExec("SELECT pg_wal_replay_pause()::text") }

// ResumeReplay lets the standby catch up again.
func (p *Pair) ResumeReplay() { p.standbyExec("SELECT pg_wal_replay_resume()::text") }

func (p *Pair) standbyExec(sql string) {
	p.t.Helper()
	var out *string
	if err := p.query(p.Standby, sql, &out); err != nil {
		p.t.Fatalf("%s on the standby: %v", sql, err)
	}
}

// StopStandby shuts the standby down (fast): connections to it are refused from then on.
func (p *Pair) StopStandby() {
	p.t.Helper()
	p.run("pg_ctl", "-D", filepath.Join(p.dir, "standby"), "-m", "fast", "-w", "stop")
}

// freePort is a TCP port of 127.0.0.1 nobody listens on now.
func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
