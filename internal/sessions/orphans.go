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
	dirs, live, err := s.staleDirs(ctx, func(name string) string {
		if strings.HasPrefix(name, carryon.SessionIDPrefix) {
			return name
		}
		return ""
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for id, names := range dirs {
		if live[id] {
			continue
		}
		dir := filepath.Join(s.cfg.Workspaces, names[0])
		if err := os.RemoveAll(dir); err != nil {
			s.cfg.Logger.Error("remove the workspace of a session that no longer exists", "session_id", id, "dir", dir, "err", err)
			continue
		}
		s.cfg.Logger.Info("removed the workspace of a session that no longer exists", "session_id", id)
		n++
	}
	return n, nil
}

// staleDirs lists the directories of the workspaces directory untouched for OrphanGrace (the
// files' clock, not the service's) whose names sessionOf maps to a session id, by that id, and
// which of those sessions exist.
func (s *Service) staleDirs(ctx context.Context, sessionOf func(name string) string) (map[string][]string, map[string]bool, error) {
	if s.cfg.Workspaces == "" {
		return nil, nil, nil
	}
	entries, err := os.ReadDir(s.cfg.Workspaces)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	old := time.Now().Add(-OrphanGrace)
	dirs := map[string][]string{}
	var ids []string
	for _, e := range entries {
		id := sessionOf(e.Name())
		if !e.IsDir() || id == "" || s.workspaceDir(id) == "" {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(old) {
			if dirs[id] == nil {
				ids = append(ids, id)
			}
			dirs[id] = append(dirs[id], e.Name())
		}
	}
	if len(ids) == 0 {
		return nil, nil, nil
	}
	var live map[string]bool
	err = s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		live, err = tx.ExistingSessions(ctx, ids)
		return err
	})
	return dirs, live, err
}
