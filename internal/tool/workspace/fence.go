package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// Reserved is the directory at the top of every workspace that holds carryon's own files: the
// lock file and the fence. The file tools refuse paths into it and list_files does not show it.
const Reserved = ".carryon"

const (
	lockFile  = Reserved + "/lock"
	fenceFile = Reserved + "/fence"
	fenceNew  = Reserved + "/fence.new"
	// maxPast is how many earlier runs' last claimed attempts a fence remembers.
	maxPast = 32
)

// token is a Fence as stored in the fence file.
type token struct {
	RunID   string `json:"run_id"`
	Attempt int    `json:"attempt"`
}

// fence is the content of the fence file: the one token that may write now, and the last
// attempt claimed by each of the runs before it (newest last), so none of them can claim back.
type fence struct {
	token
	Past []token `json:"past,omitempty"`
}

// Claim makes f the only fencing token that may write to the workspace dir from now on. A runner
// calls it when it takes an attempt of a run, before the attempt has any effect: from the moment
// Claim returns, every write of an older attempt (a runner that was paused past its lease) is
// refused with run_fenced, and no such write is in progress. Claim is monotonic: a lower attempt
// of the same run, or a run that was superseded by another run's claim, cannot claim back
// (run_fenced); claiming the current token again changes nothing. It runs under an exclusive
// lock on the workspace's lock file (flock, which NFS emulates with byte-range locks), creates
// the workspace (0700) when it does not exist, and then removes the temporary files a write cut
// off by a crash left behind (Clean), since a new attempt is exactly when one may have been.
func Claim(dir string, f tool.Fence) error {
	if f.RunID == "" || f.Attempt < 1 {
		return carryon.Errorf(carryon.EINVALID, "a workspace claim needs a run id and an attempt of 1 or more, not %q/%d", f.RunID, f.Attempt)
	}
	root, err := openRoot(dir, true)
	if err != nil {
		return fmt.Errorf("claim workspace: %w", err)
	}
	defer root.Close()
	unlock, err := lock(root)
	if err != nil {
		return fmt.Errorf("claim workspace: %w", err)
	}
	defer unlock()
	cur, err := readFence(root)
	if err != nil && !errors.Is(err, errBadFence) {
		return fmt.Errorf("claim workspace: %w", err)
	}
	next, err := claimed(cur, token{f.RunID, f.Attempt})
	if err != nil {
		return err
	}
	if next != nil {
		if err := writeFence(root, next); err != nil {
			return fmt.Errorf("claim workspace: %w", err)
		}
	}
	return cleanRoot(root)
}

// claimed returns the fence after t claims cur (nil when cur already is t), or run_fenced when t
// is older than a token that claimed before it.
func claimed(cur *fence, t token) (*fence, error) {
	if cur == nil {
		return &fence{token: t}, nil
	}
	if cur.RunID == t.RunID {
		switch {
		case t.Attempt == cur.Attempt:
			return nil, nil
		case t.Attempt < cur.Attempt:
			return nil, stale(t, cur.token)
		}
		return &fence{token: t, Past: cur.Past}, nil
	}
	next := &fence{token: t}
	for _, p := range cur.Past {
		if p.RunID == t.RunID {
			if t.Attempt <= p.Attempt {
				return nil, stale(t, cur.token)
			}
			continue // t supersedes its own run's entry
		}
		next.Past = append(next.Past, p)
	}
	next.Past = append(next.Past, cur.token)
	if len(next.Past) > maxPast {
		next.Past = next.Past[len(next.Past)-maxPast:]
	}
	return next, nil
}

func stale(t, cur token) error {
	return carryon.Errorf(carryon.EFENCED,
		"the workspace belongs to attempt %d of run %s; attempt %d of run %s is stale and may not change it",
		cur.Attempt, cur.RunID, t.Attempt, t.RunID)
}

// errBadFence marks a fence file that cannot be read as a token (cut off by a crash, or edited).
var errBadFence = errors.New("the workspace's fence file is damaged")

// readFence returns the fence, nil when the workspace was never claimed.
func readFence(root *os.Root) (*fence, error) {
	b, err := root.ReadFile(fenceFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var f fence
	if err := json.Unmarshal(b, &f); err != nil || f.RunID == "" || f.Attempt < 1 {
		return nil, errBadFence
	}
	return &f, nil
}

// writeFence replaces the fence file atomically (a new file, fsync, rename, fsync of the
// directory), so a crash leaves the old fence or the new one.
func writeFence(root *os.Root, f *fence) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	w, err := root.OpenFile(fenceNew, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := root.Rename(fenceNew, fenceFile); err != nil {
		return err
	}
	return syncDir(root, Reserved)
}

// lock takes the workspace's exclusive lock (creating the lock file) and returns its release.
func lock(root *os.Root) (func(), error) {
	if err := root.MkdirAll(Reserved, 0o700); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(lockFile, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the workspace: %w", err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// admit checks, under the workspace lock, that a write of f may change the workspace now: f must
// be the claimed token, and an unfenced write (zero f) is allowed only in a workspace nobody has
// claimed. A fenced write to a workspace nobody has claimed is allowed too (a caller that does not
// claim, such as an engine driven directly).
func admit(root *os.Root, f tool.Fence) error {
	cur, err := readFence(root)
	switch {
	case errors.Is(err, errBadFence):
		return carryon.Errorf(carryon.EFENCED, "%v; the next attempt that claims the workspace repairs it", err)
	case err != nil:
		return err
	case cur == nil:
		return nil
	case f.IsZero():
		return carryon.Errorf(carryon.EFENCED,
			"the workspace belongs to attempt %d of run %s; a write without a run attempt is refused", cur.Attempt, cur.RunID)
	case f.RunID != cur.RunID || f.Attempt != cur.Attempt:
		return stale(token{f.RunID, f.Attempt}, cur.token)
	}
	return nil
}

// guard takes the workspace lock and checks f under it. On success the caller holds the lock
// until it calls the returned release; no claim can land in between.
func guard(root *os.Root, f tool.Fence) (func(), error) {
	unlock, err := lock(root)
	if err != nil {
		return nil, err
	}
	if err := admit(root, f); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// syncDir fsyncs the directory rel of root.
func syncDir(root *os.Root, rel string) error {
	d, err := root.Open(rel)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Clean removes the temporary files that writes cut off by a crash left in the workspace dir
// (".NAME.tmp-HEX" beside the file they were for, and an unfinished fence). It does not follow
// symbolic links; a workspace that does not exist is clean. Claim calls it.
func Clean(dir string) error {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	defer root.Close()
	return cleanRoot(root)
}

func cleanRoot(root *os.Root) error {
	var errs []error
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			errs = append(errs, err)
			return nil
		}
		if !d.Type().IsRegular() || !(isTemp(path.Base(p)) || p == fenceNew) {
			return nil
		}
		if err := root.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("clean the workspace: %w", errors.Join(errs...))
	}
	return nil
}
