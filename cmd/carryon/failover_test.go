package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/poll"
)

// pgAutoFailover is a pg_auto_failover formation in a temporary directory: a monitor and nodes,
// each pg_autoctl in its own process group, run as the postgres user when the test runs as root.
type pgAutoFailover struct {
	t     *testing.T
	dir   string
	bin   string
	ports map[string]int
	procs map[string]*exec.Cmd
}

// pgctlBin is where Debian's PostgreSQL 15 programs are.
const pgctlBin = "/usr/lib/postgresql/15/bin"

func newPgAutoFailover(t *testing.T) *pgAutoFailover {
	bin, err := exec.LookPath("pg_autoctl")
	if err != nil {
		if os.Getenv("CARRYON_TEST_REQUIRE_FAILOVER") == "1" {
			t.Fatal("CARRYON_TEST_REQUIRE_FAILOVER=1 but pg_autoctl is not installed (apt-get install postgresql-15-auto-failover)")
		}
		t.Skip("pg_autoctl is not installed (apt-get install postgresql-15-auto-failover); set CARRYON_TEST_REQUIRE_FAILOVER=1 to fail instead")
	}
	// Not t.TempDir: the postgres user must be able to reach the directory.
	dir, err := os.MkdirTemp("", "carryon-failover-")
	if err != nil {
		t.Fatal(err)
	}
	f := &pgAutoFailover{t: t, dir: dir, bin: bin, ports: map[string]int{}, procs: map[string]*exec.Cmd{}}
	if os.Geteuid() == 0 {
		f.run("chown", "postgres", dir)
	}
	t.Cleanup(func() {
		for _, c := range f.procs {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			c.Wait()
		}
		os.RemoveAll(dir)
	})
	return f
}

// command is name with args as the postgres user (when root), with the PostgreSQL programs first
// on the PATH and a HOME of the formation's own.
func (f *pgAutoFailover) command(name string, args ...string) *exec.Cmd {
	env := []string{"PATH=" + pgctlBin + ":/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + f.dir, "PG_AUTOCTL_DEBUG="}
	var c *exec.Cmd
	if os.Geteuid() == 0 && name != "chown" {
		c = exec.Command("runuser", append([]string{"-u", "postgres", "--", "env"}, append(env, append([]string{name}, args...)...)...)...)
	} else {
		c = exec.Command(name, args...)
		c.Env = env
	}
	c.Dir = f.dir
	return c
}

// run runs a command to its end and returns its output, failing the test when it fails.
func (f *pgAutoFailover) run(name string, args ...string) string {
	f.t.Helper()
	out, err := f.command(name, args...).CombinedOutput()
	if err != nil {
		f.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// start starts a long-running pg_autoctl in its own process group, logging to dir/name.log.
func (f *pgAutoFailover) start(name string, args ...string) {
	f.t.Helper()
	log, err := os.Create(filepath.Join(f.dir, name+".log"))
	if err != nil {
		f.t.Fatal(err)
	}
	c := f.command(f.bin, args...)
	c.Stdout, c.Stderr = log, log
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.procs[name] = c
}

// freePort is a TCP port of 127.0.0.1 nobody listens on now.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// monitorURI is the URL nodes register with.
func (f *pgAutoFailover) monitorURI() string {
	return fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", f.ports["monitor"])
}

// state is the monitor's view of the formation.
func (f *pgAutoFailover) state() string {
	out, _ := f.command(f.bin, "show", "state", "--pgdata", filepath.Join(f.dir, "monitor")).CombinedOutput()
	return string(out)
}

// waitState waits until node reports and is assigned state.
func (f *pgAutoFailover) waitState(node, state string, within time.Duration) {
	f.t.Helper()
	if !poll.Within(within, func() bool {
		for _, line := range strings.Split(f.state(), "\n") {
			cols := strings.Split(line, "|")
			if len(cols) == 7 && strings.TrimSpace(cols[0]) == node &&
				strings.TrimSpace(cols[5]) == state && strings.TrimSpace(cols[6]) == state {
				return true
			}
		}
		return false
	}) {
		f.t.Fatalf("node %s never became %s:\n%s", node, state, f.state())
	}
}

// psql runs one statement on the PostgreSQL of name (over its unix socket).
func (f *pgAutoFailover) psql(name, db, sql string) string {
	f.t.Helper()
	return f.run("psql", "-h", "/var/run/postgresql", "-p", strconv.Itoa(f.ports[name]), "-d", db, "-Atc", sql)
}

// up brings up the monitor, with the health-check timings docs/SCALING.md recommends, and nodes
// n1 (the primary) and n2 (its synchronous standby); sync false makes the standby asynchronous.
func (f *pgAutoFailover) up(sync bool) {
	f.t.Helper()
	for _, n := range []string{"monitor", "n1", "n2"} {
		f.ports[n] = freePort(f.t)
	}
	common := []string{"--auth", "trust", "--no-ssl", "--hostname", "127.0.0.1", "--run"}
	f.start("monitor", append([]string{"create", "monitor", "--pgdata", filepath.Join(f.dir, "monitor"), "--pgport", strconv.Itoa(f.ports["monitor"])}, common...)...)
	if !poll.Within(60*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(f.dir, "monitor.log"))
		return strings.Contains(string(b), "Monitor has been successfully initialized")
	}) {
		b, _ := os.ReadFile(filepath.Join(f.dir, "monitor.log"))
		f.t.Fatalf("the monitor did not start:\n%s", b)
	}
	for _, set := range []string{"health_check_period = 1000", "health_check_timeout = 1000", "health_check_max_retries = 2",
		"health_check_retry_delay = 500", "node_considered_unhealthy_timeout = 5000", "primary_demote_timeout = 5000"} {
		f.psql("monitor", "pg_auto_failover", "ALTER SYSTEM SET pgautofailover."+set)
	}
	f.psql("monitor", "pg_auto_failover", "SELECT pg_reload_conf()")
	node := func(name string) {
		f.start(name, append([]string{"create", "postgres", "--pgdata", filepath.Join(f.dir, name), "--pgport", strconv.Itoa(f.ports[name]),
			"--monitor", f.monitorURI(), "--name", name}, common...)...)
	}
	node("n1")
	f.waitState("n1", "single", 90*time.Second)
	node("n2")
	f.waitState("n2", "secondary", 120*time.Second)
	f.waitState("n1", "primary", 30*time.Second)
	if !sync {
		f.run(f.bin, "set", "node", "replication-quorum", "false", "--pgdata", filepath.Join(f.dir, "n2"))
		if !poll.Within(30*time.Second, func() bool {
			return strings.TrimSpace(f.psql("n1", "postgres", "SHOW synchronous_standby_names")) == ""
		}) {
			f.t.Fatal("the primary still waits for its standby")
		}
	}
	f.psql("n1", "postgres", "CREATE DATABASE carryon")
}

// killPrimary kills n1's keeper and postmaster with SIGKILL, as a machine dying would.
func (f *pgAutoFailover) killPrimary() {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "n1", "postmaster.pid"))
	if err != nil {
		f.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		f.t.Fatal(err)
	}
	c := f.procs["n1"]
	syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGKILL)
	c.Wait()
	delete(f.procs, "n1")
}

// TestFailoverSynchronous kills the primary of a pg_auto_failover formation with synchronous
// replication under 32 writers through 2 carryon instances: every acknowledged write is on the
// new primary exactly once, and writes come back within 30 s.
func TestFailoverSynchronous(t *testing.T) {
	lost, back := failover(t, true)
	if lost != 0 {
		t.Fatalf("%d acknowledged writes lost with synchronous replication", lost)
	}
	if back > 30*time.Second {
		t.Fatalf("no write was acknowledged for %s after the primary died, want under 30s", back)
	}
}

// TestFailoverAsynchronous is the same with an asynchronous standby: it reports the acknowledged
// writes lost (the failover may lose some) and checks none was applied twice.
func TestFailoverAsynchronous(t *testing.T) {
	lost, _ := failover(t, false)
	t.Logf("asynchronous replication: %d acknowledged writes lost", lost)
}

// failover runs the scenario and returns the acknowledged writes missing afterwards and the
// writes' unavailability: the longest time after the kill without an acknowledged write.
func failover(t *testing.T, synchronous bool) (lost int, back time.Duration) {
	f := newPgAutoFailover(t)
	f.up(synchronous)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/carryon?target_session_attrs=read-write&sslmode=disable&connect_timeout=2",
		f.ports["n1"], f.ports["n2"])
	srvs := []*server{startServer(t, t.TempDir(), "--db", dsn), nil}
	srvs[1] = startServer(t, t.TempDir(), "--db", dsn)
	key := localKey(t, srvs[0].data)

	const writers = 32
	sids := make([]string, writers)
	for i := range sids {
		sids[i] = must(t, srvs[i%2].url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	}
	var acked [writers]atomic.Int64
	var total atomic.Int64
	var killedAt atomic.Int64 // unix nanos, 0 before the kill
	// The writes' unavailability is the longest time after the kill with no write acknowledged:
	// some writes may still commit through the dying primary's last backends.
	var gapMu sync.Mutex
	var lastAck, maxGap time.Duration
	var acksAfter int
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				rid := fmt.Sprintf("w%d-%d", w, i)
				for attempt := 0; ; attempt++ {
					srv := srvs[(w+attempt)%2]
					r, err := do(srv.url, key, "POST", "/v1/sessions/"+sids[w]+"/messages", appendBody(rid, "request_id", rid))
					if err == nil && r.status == 201 {
						acked[w].Add(1)
						total.Add(1)
						if k := killedAt.Load(); k != 0 {
							now := time.Duration(time.Now().UnixNano() - k)
							gapMu.Lock()
							maxGap, lastAck = max(maxGap, now-lastAck), now
							acksAfter++
							gapMu.Unlock()
						}
						break
					}
					if err == nil && r.status != 503 && r.status != 409 && r.status != 500 {
						t.Errorf("%s: %d %s", rid, r.status, r.body)
						return
					}
					<-time.After(100 * time.Millisecond) // a client's pause before it retries
				}
			}
		})
	}
	poll.Eventually(t, "writes before the kill", func() bool { return total.Load() >= 300 })
	killedAt.Store(time.Now().UnixNano())
	f.killPrimary()
	f.waitState("n2", "wait_primary", 60*time.Second)
	after := total.Load()
	if !poll.Within(90*time.Second, func() bool { return total.Load() >= after+300 }) {
		t.Fatalf("writes did not come back after the failover:\n%s", f.state())
	}
	close(stop)
	wg.Wait()
	back = maxGap
	t.Logf("synchronous=%v: %d writes acknowledged (%d after the kill); longest time without an acknowledged write after the kill %.1fs",
		synchronous, total.Load(), acksAfter, back.Seconds())

	for w := range writers {
		n := must(t, srvs[0].url, key, "GET", "/v1/sessions/"+sids[w], nil, 200).json(t)["message_count"].(float64)
		switch a := acked[w].Load(); {
		case int64(n) > a:
			t.Errorf("session %d: %d messages for %d acknowledged request ids: a request applied twice", w, int64(n), a)
		case int64(n) < a:
			lost += int(a - int64(n))
		}
	}
	return lost, back
}
