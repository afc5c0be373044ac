package runs_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/users"
)

// TestForgetEndsRunningRunQuietly: forgetting a user whose run is in the middle of a model call
// ends that run as part of the forget; the runner, the sessions service and the users service
// log it at INFO or WARN, never ERROR (an ERROR pages someone; a forget is an admin's routine).
func TestForgetEndsRunningRunQuietly(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuf{}
			log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			st := d.open(t)
			e := newHubEnv(t, st, sessions.Config{Logger: log})
			m := newBlocking()
			svc := runner(t, st, e.sess, e.data, m, runs.Config{Logger: log, Poll: 20 * time.Millisecond,
				LeaseTTL: 600 * time.Millisecond, Heartbeat: 20 * time.Millisecond})
			stop := work(t, svc)
			_, run := e.startRun(t, svc, "Think for a long time")
			<-m.entered // the run is in its model call
			us := users.New(st, nil).ForgetWith(e.sess)
			e.sess.EndRunsWith(svc)
			if _, err := us.ForgetUser(carryon.NewTrustedContext(context.Background()), "usr_alice"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the runner to let the run go", func() bool {
				s := logs.String()
				return strings.Contains(s, "run ended") || strings.Contains(s, "level=ERROR")
			})
			stop() // the runner's shutdown must not complain either
			if s := logs.String(); strings.Contains(s, "level=ERROR") {
				t.Fatalf("forgetting a user with a running run %s logged an ERROR:\n%s", run.ID, s)
			}
			s := logs.String()
			ended, forgotten := strings.Index(s, `msg="run ended" run=`+run.ID), strings.Index(s, `msg="user forgotten"`)
			if ended < 0 || forgotten < ended || !strings.Contains(s[ended:], "status=cancelled") {
				t.Fatalf("want the run ended (cancelled) before the user was forgotten:\n%s", s)
			}
		})
	}
}
