package sessions

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/carryon-hub/carryon"
)

// An import writes a bundle's workspace files before its transaction, into a staging directory
// of the workspaces directory named import-SESSION-RANDOM, and renames it to the session's own
// after the commit. A crash between the two leaves a staged directory: the sweeper finishes what
// the import did, moving the files into place when the session was stored and removing them
// when it was not.
const stagePrefix = "import-"

// stageName is the name of a new staging directory for the files of session id.
func stageName(id string) string {
	return stagePrefix + id + "-" + strings.TrimPrefix(carryon.NewID("x_"), "x_")
}

// stagedSession is the session a staging directory's name is for, or "" when name is none.
func stagedSession(name string) string {
	rest, ok := strings.CutPrefix(name, stagePrefix)
	if !ok {
		return ""
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 || !strings.HasPrefix(rest[:i], carryon.SessionIDPrefix) {
		return ""
	}
	return rest[:i]
}

// sweepStagedImports settles the staging directories, untouched for OrphanGrace, of imports cut
// off by a crash: a stored session without a workspace gets the files; the rest are removed. It
// returns how many it settled.
func (s *Service) sweepStagedImports(ctx context.Context) (int, error) {
	staged, live, err := s.staleDirs(ctx, stagedSession)
	if err != nil {
		return 0, err
	}
	n := 0
	for id, names := range staged {
		for _, name := range names {
			dir := filepath.Join(s.cfg.Workspaces, name)
			if _, err := os.Lstat(s.workspaceDir(id)); live[id] && errors.Is(err, fs.ErrNotExist) {
				if err := os.Rename(dir, s.workspaceDir(id)); err != nil {
					s.cfg.Logger.Error("move the files of a cut-off import into place", "session_id", id, "err", err)
					continue
				}
				s.cfg.Logger.Info("moved the files of a cut-off import into place", "session_id", id)
				n++
				continue
			}
			if err := os.RemoveAll(dir); err != nil {
				s.cfg.Logger.Error("remove the files of a cut-off import", "session_id", id, "dir", dir, "err", err)
				continue
			}
			s.cfg.Logger.Info("removed the files of a cut-off import", "session_id", id, "stored", live[id])
			n++
		}
	}
	return n, nil
}
