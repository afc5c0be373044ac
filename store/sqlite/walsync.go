package sqlite

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"github.com/carryon-hub/carryon"
)

// Durable commits with the fsync outside the write lock. At synchronous=FULL SQLite fsyncs the
// WAL inside COMMIT, while the transaction still holds the database's write lock: the next batch
// of writers waits for the disk before it can begin, so a batch's wall time is its members' work
// plus its fsync. With a file database at FULL (the default), carryon therefore runs its
// connections at synchronous=NORMAL — SQLite still syncs the WAL before every checkpoint and the
// database after it, so the files stay consistent after a power loss — and does the commit's fsync
// itself, after COMMIT, with the write lock released: the next batch runs its members while the
// disk flushes the one before. One fsync covers every commit made before it began.
//
// What FULL promises still holds in this process: a Write returns only after an fsync that covers
// its commit, and a Read returns only after every commit it could have seen is on disk (it waits
// for that fsync, if one is due, before it answers). A reader in another process (a second
// carryon serve, a CLI command on the same file) may see a commit up to one fsync before it is
// durable; if power failed in that window, the commit would be gone after the restart, and no
// writer would have been told that it held.
//
// An fsync that fails is final: Linux may drop the pages it could not write and report the next
// fsync clean, so no later commit can be known to be durable. Every Write and Read after it fails
// with EINTERNAL until the database is opened again (SQLite then recovers from what the WAL holds).
type walSync struct {
	path string // the WAL file
	mu   sync.Mutex
	cond sync.Cond
	// started counts the commits begun (a reader that saw one must wait for it), committed the
	// ones whose COMMIT returned (what an fsync starting now covers), synced the ones on disk.
	started, committed, synced uint64
	syncing                    bool
	waiting                    int // callers of wait blocked in it (for tests)
	err                        error
	f                          *os.File      // the WAL, opened at the first fsync; used only by the syncing goroutine
	flushes                    atomic.Uint64 // the WAL's fsyncs that succeeded (DB.CommitSyncs)
}

func newWALSync(path string) *walSync {
	s := &walSync{path: path + "-wal"}
	s.cond.L = &s.mu
	return s
}

// commit commits stx and returns the commit's number, which wait takes. The number is taken
// before COMMIT, so a reader that sees the commit also sees a number that covers it.
func (s *walSync) commit(stx *sql.Tx) (uint64, error) {
	s.mu.Lock()
	s.started++
	n := s.started
	s.mu.Unlock()
	err := stx.Commit()
	s.mu.Lock()
	s.committed = n // commits are serialised by the write lock, so they end in order
	s.cond.Broadcast()
	s.mu.Unlock()
	return n, err
}

// waitAll returns once every commit begun so far is on disk.
func (s *walSync) waitAll() error {
	s.mu.Lock()
	n := s.started
	s.mu.Unlock()
	return s.wait(n)
}

// wait returns once commit n is on disk, or the error of the fsync that failed. The first waiter
// that finds no fsync running starts one for every commit made so far; the others wait for it.
func (s *walSync) wait(n uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch {
		case s.err != nil:
			return s.err
		case s.synced >= n:
			return nil
		case !s.syncing && s.committed >= n:
			s.syncing = true
			target := s.committed
			s.mu.Unlock()
			err := s.fsync()
			s.mu.Lock()
			s.syncing = false
			if err != nil {
				s.err = carryon.Errorf(carryon.EINTERNAL, "sqlite: fsync of %s failed, so no later commit can be known to be durable; restart the server: %v", s.path, err)
			} else {
				s.synced = target
			}
			s.cond.Broadcast()
		default:
			s.waiting++
			s.cond.Wait()
			s.waiting--
		}
	}
}

// fsync flushes the WAL to disk. SQLite removes the WAL when its last connection closes (after a
// checkpoint it synced into the database) and makes a new one with the next: when the path names
// another file after the flush, that one is flushed too; when there is none, every commit is in
// the synced database already.
func (s *walSync) fsync() error {
	for {
		if s.f == nil {
			f, err := os.Open(s.path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			} else if err != nil {
				return err
			}
			s.f = f
		}
		if err := flushFile(s.f); err != nil {
			return err
		}
		s.flushes.Add(1)
		now, err := os.Stat(s.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		if was, err := s.f.Stat(); err == nil && os.SameFile(was, now) {
			return nil
		}
		s.f.Close()
		s.f = nil
	}
}

// flushFile is fdatasync; a test replaces it to hold an fsync or make it fail.
var flushFile = fdatasync

// close releases the WAL file.
func (s *walSync) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.syncing {
		s.cond.Wait()
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// CommitSyncs returns how many fsyncs of the WAL carryon has made after commits so far (one may
// cover several commits); 0 when SQLite syncs its commits itself (synchronous other than FULL, a
// "file:" URI, an in-memory database). SQLite's own syncs at checkpoints are not counted.
func (db *DB) CommitSyncs() uint64 {
	if db.ws == nil {
		return 0
	}
	return db.ws.flushes.Load()
}
