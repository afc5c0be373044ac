package sessions

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// OrphanGrace is how long a workspace directory whose session does not exist is left alone
// before the sweeper removes it: a directory is made only for a stored session, so one without
// is left over (a crash between a session's deletion and its directory's removal, a removal that
// failed, a run's claim that raced the deletion), and the grace keeps the sweep away from any
// directory still in use as it is checked.
const OrphanGrace = 10 * time.Minute

// sweepOrphanWorkspaces removes the workspace directories, untouched for OrphanGrace, of
// sessions that no longer exist, and returns how many it removed.
func (s *Service) sweepOrphanWorkspaces(ctx context.Context) (int, error) {
	if s.cfg.Workspaces == "" {
		return 0, nil
	}
	entries, err := os.ReadDir(s.cfg.Workspaces)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	old := time.Now().Add(-OrphanGrace) // the files' clock, not the service's
	var ids []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), carryon.SessionIDPrefix) || s.workspaceDir(e.Name()) == "" {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(old) {
			ids = append(ids, e.Name())
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	var live map[string]bool
	err = s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		live, err = tx.ExistingSessions(ctx, ids)
		return err
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if live[id] {
			continue
		}
		dir := filepath.Join(s.cfg.Workspaces, id)
		if err := os.RemoveAll(dir); err != nil {
			s.cfg.Logger.Error("remove the workspace of a session that no longer exists", "session_id", id, "dir", dir, "err", err)
			continue
		}
		s.cfg.Logger.Info("removed the workspace of a session that no longer exists", "session_id", id)
		n++
	}
	return n, nil
}
