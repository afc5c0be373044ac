package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store/sqlite"
)

const backupUsage = `usage: carryon backup --to FILE [--data DIR] [--db SQLITE_FILE] [--workspaces DIR]
  A consistent copy of a SQLite deployment while it serves: the database as one read transaction
  saw it (every write acknowledged before the backup began is in it), then the sessions'
  workspace files, in one tar archive (gzip-compressed when FILE ends in .gz or .tgz), checked
  before it is kept (SQLite's integrity check, the row counts it reports). The local key file is
  not in it: a server started on the restored data makes a new one. For PostgreSQL use pg_dump
  (docs/OPERATIONS.md).

Examples:
  carryon backup --to /backups/carryon-$(date +%F).tar.gz
  carryon backup --to carryon.tar --data /srv/carryon`

const restoreUsage = `usage: carryon restore --from FILE [--data DIR]
  Restore a backup made by carryon backup into an empty data directory (no database, no
  workspaces there yet), checking the database against the counts the backup recorded. Then
  start the server on that directory. For PostgreSQL use pg_restore (docs/OPERATIONS.md).

Examples:
  carryon restore --from /backups/carryon-2026-12-01.tar.gz --data /srv/carryon-restored`

// pgBackupHint is what backup and restore say for a PostgreSQL database.
const pgBackupHint = "carryon backup and restore are for SQLite; for PostgreSQL use pg_dump --format=custom and pg_restore (docs/OPERATIONS.md)"

// backupManifest is backup.json in an archive: what the backup holds.
type backupManifest struct {
	Format         int              `json:"format"`
	CreatedAt      time.Time        `json:"created_at"`
	Version        string           `json:"carryon_version"`
	Rows           map[string]int64 `json:"rows"`
	WorkspaceFiles int              `json:"workspace_files"`
}

func runBackup(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	fs := newFlagSet("backup", backupUsage, stdout)
	var sf storeFlags
	sf.register(fs.FlagSet, getenv)
	to := fs.String("to", "", "the archive to write (must not exist)")
	workspaces := fs.String("workspaces", "", "directory of the sessions' workspaces; default DATA/workspaces")
	if pos, err := fs.parse(getenv, args); err != nil {
		return err
	} else if len(pos) != 0 || *to == "" {
		return fs.misuse()
	}
	dsn, err := sf.dsn()
	if err != nil {
		return err
	}
	if isPostgres(dsn) {
		return usagef("%s", pgBackupHint)
	}
	if _, err := os.Stat(*to); err == nil {
		return usagef("--to %s exists already; a backup never overwrites", *to)
	}
	if *workspaces == "" {
		*workspaces = filepath.Join(sf.data, "workspaces")
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	db, ok := st.(*sqlite.DB)
	if !ok {
		return usagef("%s", pgBackupHint)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(*to), ".carryon-backup-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rows, err := db.BackupTo(ctx, filepath.Join(tmp, "carryon.db"))
	if err != nil {
		return err
	}
	m := backupManifest{Format: 1, CreatedAt: time.Now().UTC(), Version: carryon.Version, Rows: rows}
	partial := *to + ".partial"
	if err := writeArchive(partial, filepath.Join(tmp, "carryon.db"), *workspaces, &m); err != nil {
		os.Remove(partial)
		return err
	}
	if err := os.Rename(partial, *to); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup %s: %s; %d workspace files\n", *to, rowSummary(rows), m.WorkspaceFiles)
	return nil
}

// writeArchive writes the database copy, the workspaces' files and the manifest to path, durably.
func writeArchive(path, dbCopy, workspaces string, m *backupManifest) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	var w io.Writer = f
	var gz *gzip.Writer
	if strings.HasSuffix(path, ".gz.partial") || strings.HasSuffix(path, ".tgz.partial") {
		gz = gzip.NewWriter(f)
		w = gz
	}
	tw := tar.NewWriter(w)
	if err := addFile(tw, "carryon.db", dbCopy); err != nil {
		return err
	}
	err = filepath.WalkDir(workspaces, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == workspaces {
				return nil // no session has written a file yet
			}
			return err
		}
		rel, _ := filepath.Rel(workspaces, p)
		if !d.Type().IsRegular() || skipInBackup(rel) {
			return nil
		}
		m.WorkspaceFiles++
		return addFile(tw, "workspaces/"+filepath.ToSlash(rel), p)
	})
	if err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	manifest, _ := json.MarshalIndent(m, "", "  ")
	if err := tw.WriteHeader(&tar.Header{Name: "backup.json", Mode: 0o600, Size: int64(len(manifest)), ModTime: m.CreatedAt}); err != nil {
		return err
	}
	if _, err := tw.Write(manifest); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return err
		}
	}
	return f.Sync()
}

// skipInBackup says which workspace files stay out: the lock file and the temporary files of a
// write in progress (the next claim removes them anyway).
func skipInBackup(rel string) bool {
	base := filepath.Base(rel)
	return base == "lock" && filepath.Base(filepath.Dir(rel)) == ".carryon" ||
		strings.HasPrefix(base, ".") && strings.Contains(base, ".tmp-")
}

func addFile(tw *tar.Writer, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
		return err
	}
	_, err = io.CopyN(tw, f, fi.Size()) // a file that grows meanwhile is copied as it was
	return err
}

func runRestore(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	fs := newFlagSet("restore", restoreUsage, stdout)
	var sf storeFlags
	sf.register(fs.FlagSet, getenv)
	from := fs.String("from", "", "the archive carryon backup wrote")
	if pos, err := fs.parse(getenv, args); err != nil {
		return err
	} else if len(pos) != 0 || *from == "" {
		return fs.misuse()
	}
	if sf.db != "" {
		return usagef("restore writes the SQLite database of --data; for PostgreSQL use pg_restore (docs/OPERATIONS.md)")
	}
	dbPath := filepath.Join(sf.data, "carryon.db")
	if _, err := os.Stat(dbPath); err == nil {
		return usagef("%s exists: restore only into a data directory without a database", dbPath)
	}
	if entries, err := os.ReadDir(filepath.Join(sf.data, "workspaces")); err == nil && len(entries) > 0 {
		return usagef("%s holds workspaces: restore only into an empty data directory", filepath.Join(sf.data, "workspaces"))
	}
	if err := os.MkdirAll(sf.data, 0o700); err != nil {
		return err
	}
	m, files, err := extractArchive(*from, sf.data, dbPath+".partial")
	if err != nil {
		os.Remove(dbPath + ".partial")
		return err
	}
	rows, err := sqlite.VerifyBackup(ctx, dbPath+".partial")
	if err != nil {
		os.Remove(dbPath + ".partial")
		return err
	}
	for t, n := range m.Rows {
		if rows[t] != n {
			os.Remove(dbPath + ".partial")
			return fmt.Errorf("the restored database has %d rows in %s, the backup recorded %d: the archive is damaged", rows[t], t, n)
		}
	}
	if files != m.WorkspaceFiles {
		return fmt.Errorf("the archive holds %d workspace files, its manifest says %d: the archive is damaged", files, m.WorkspaceFiles)
	}
	if err := os.Rename(dbPath+".partial", dbPath); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s into %s (backup of %s): %s; %d workspace files\n", *from, sf.data,
		m.CreatedAt.Format(time.RFC3339), rowSummary(rows), files)
	return nil
}

// extractArchive writes the archive's database to dbPath and its workspace files under data, and
// returns its manifest. Entries that would land outside data, or that are not regular files, are
// refused.
func extractArchive(path, data, dbPath string) (*backupManifest, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") || strings.HasSuffix(path, ".tgz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	var m *backupManifest
	files, sawDB := 0, false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, 0, fmt.Errorf("%s is no carryon backup: %w", path, err)
		}
		name := filepath.ToSlash(filepath.Clean(h.Name))
		if h.Typeflag != tar.TypeReg || strings.HasPrefix(name, "/") || name == ".." || strings.HasPrefix(name, "../") {
			return nil, 0, fmt.Errorf("%s: refused entry %q", path, h.Name)
		}
		switch {
		case name == "backup.json":
			m = &backupManifest{}
			if err := json.NewDecoder(tr).Decode(m); err != nil {
				return nil, 0, fmt.Errorf("%s: backup.json: %w", path, err)
			}
		case name == "carryon.db":
			sawDB = true
			if err := writeFrom(dbPath, tr); err != nil {
				return nil, 0, err
			}
		case strings.HasPrefix(name, "workspaces/"):
			files++
			if err := writeFrom(filepath.Join(data, filepath.FromSlash(name)), tr); err != nil {
				return nil, 0, err
			}
		default:
			return nil, 0, fmt.Errorf("%s: unexpected entry %q", path, h.Name)
		}
	}
	if m == nil || !sawDB || m.Format != 1 {
		return nil, 0, fmt.Errorf("%s is no carryon backup (no database or manifest of format 1)", path)
	}
	return m, files, nil
}

func writeFrom(path string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// rowSummary lists the main tables' row counts, e.g. "3 sessions, 40 messages, 2 runs".
func rowSummary(rows map[string]int64) string {
	var parts []string
	for _, t := range []string{"users", "sessions", "messages", "runs", "actions", "memories"} {
		if n, ok := rows[t]; ok {
			parts = append(parts, fmt.Sprintf("%d %s", n, t))
		}
	}
	return strings.Join(parts, ", ")
}
