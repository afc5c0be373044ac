package sessions

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// workspaceDir returns the directory of a session's workspace under Config.Workspaces, or "" when
// the service has no workspaces directory or id cannot be a directory name in it.
func (s *Service) workspaceDir(id string) string {
	if s.cfg.Workspaces == "" || id == "" || !filepath.IsLocal(id) || strings.ContainsAny(id, `/\`) {
		return ""
	}
	return filepath.Join(s.cfg.Workspaces, id)
}

// removeWorkspace removes a deleted session's workspace with its files. It runs after the
// deletion committed; a failure is logged, not returned, since the session is gone either way.
func (s *Service) removeWorkspace(id string) {
	dir := s.workspaceDir(id)
	if dir == "" {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		s.cfg.Logger.Error("remove the workspace of a deleted session", "session_id", id, "dir", dir, "err", err)
	}
}

// copyWorkspace gives a new fork a copy of its parent's workspace files as they are now (files
// are not versioned). It runs after the fork committed; a failure is logged, and the fork keeps
// what was copied.
func (s *Service) copyWorkspace(parent, child string) {
	src, dst := s.workspaceDir(parent), s.workspaceDir(child)
	if src == "" || dst == "" {
		return
	}
	if err := workspace.Copy(src, dst); err != nil {
		s.cfg.Logger.Error("copy the workspace into a fork", "session_id", child, "parent_id", parent, "err", err)
	}
}
