package sessions

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// checkFence refuses a runner's write unless its run belongs to the session, is running and is
// still at the runner's attempt: a runner that was paused past its lease and lost the run to
// another attempt cannot write (fencing).
func checkFence(ctx context.Context, tx store.Tx, owner, sessionID string, f *carryon.RunFence) error {
	if f == nil {
		return nil
	}
	run, err := tx.GetRun(ctx, owner, f.RunID)
	if err != nil {
		return err
	}
	if run.SessionID != sessionID {
		return carryon.Errorf(carryon.EINVALID, "run %s is not a run of session %s", f.RunID, sessionID)
	}
	if run.Attempt != f.Attempt || run.Status != carryon.RunRunning {
		return carryon.Errorf(carryon.EFENCED, "run %s is at attempt %d (%s); a write of attempt %d is refused", run.ID, run.Attempt, run.Status, f.Attempt)
	}
	return nil
}
