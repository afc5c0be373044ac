package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
)

const copyUsage = `usage: carryon copy [--from SQLITE_FILE] --to postgres://USER@HOST:5432/DB [--progress auto|bar|lines|none]
  Move a deployment from its SQLite database to an empty PostgreSQL database. Every row is
  checked first (a refused copy lists the bad rows and writes nothing); the copy commits only
  when the row counts of both sides match. A server may keep running on the source.

Examples:
  carryon copy --to postgres://carryon@db.internal:5432/carryon
  carryon copy --from /srv/carryon/carryon.db --to postgres://carryon@db.internal:5432/carryon --progress lines`

// runCopy moves a deployment from the embedded SQLite database to an empty PostgreSQL database:
// every row is first checked to be storable in PostgreSQL (a refused copy lists the bad rows
// and writes nothing), then every table is copied, in foreign-key order, in one PostgreSQL
// transaction that commits only when the row counts of both sides match. The source is read in one read transaction, so a server may
// keep running on it; what it writes after the copy began is not copied.
func runCopy(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("copy", copyUsage, stdout)
	data := fs.String("data", defaultDataDir(getenv), "data directory whose carryon.db is the default source")
	from := fs.String("from", "", "the SQLite database to copy: a file path or sqlite://path (default carryon.db in the data directory)")
	to := fs.String("to", "", "the PostgreSQL database to copy into, which must be empty: postgres://user@host:5432/db")
	progressMode := fs.String("progress", "auto", "progress on stderr: auto (a bar on a terminal, lines otherwise), bar, lines or none")
	pos, err := fs.parse(getenv, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *to == "" {
		return fs.misuse()
	}
	if !isPostgres(*to) {
		return usagef("--to must be a postgres:// URL, not %q", *to)
	}
	src := strings.TrimPrefix(*from, "sqlite://")
	if src == "" {
		src = filepath.Join(*data, "carryon.db")
	}
	if isPostgres(src) {
		return usagef("--from must be a SQLite file; copying between PostgreSQL databases is pg_dump's job")
	}
	progress, err := newCopyProgress(stderr, *progressMode)
	if err != nil {
		return err
	}
	if st, err := os.Stat(src); err != nil {
		return fmt.Errorf("source database %s: %w", src, err)
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("source database %s is not a file", src)
	}

	// Opening each side with its driver brings both schemas to this build's latest version.
	sdb, err := sqlite.Open(ctx, src)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer sdb.Close()
	pdb, err := postgres.Open(ctx, *to, postgres.WithMaxConns(2))
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	defer pdb.Close()
	started := time.Now()
	var counts []copyCount
	err = sdb.Dump(ctx, func(snap store.Snapshot) error {
		return pdb.Load(ctx, func(load store.LoadTx) error {
			var err error
			counts, err = copyTables(ctx, snap, load, progress, stderr)
			if err == nil {
				err = printCounts(stdout, counts)
			}
			for _, c := range counts {
				if err == nil && !c.match() {
					err = errors.New("the row counts differ: the copy was rolled back and the destination is unchanged")
				}
			}
			return err
		})
	})
	if err != nil {
		return err
	}
	var total int64
	for _, c := range counts { // fresh planner statistics; a failure here loses nothing
		total += c.dest
		if err := pdb.Analyze(ctx, c.table); err != nil {
			fmt.Fprintf(stderr, "warning: analyze %s: %v\n", c.table, err)
		}
	}
	_, err = fmt.Fprintf(stdout, "copied %s rows in %d tables in %s; every count matches.\n"+
		"Workspace files are not in the database: copy the workspaces directory (by default %s)\nto the one the servers' --workspaces names, "+
		"then start them with --db and the PostgreSQL URL.\n",
		commas(total), len(counts), time.Since(started).Round(time.Millisecond), filepath.Join(filepath.Dir(src), "workspaces"))
	return err
}

// copyBatch is how many rows a copy reads and writes at a time.
const copyBatch = 1000

// copyTables copies every table of snap into load after checking every row, rebuilds what the
// destination derives, and returns the counts of both sides.
func copyTables(ctx context.Context, snap store.Snapshot, load store.LoadTx, progress *copyProgress, stderr io.Writer) ([]copyCount, error) {
	tables, warnings, err := load.Plan(snap.Tables())
	if err != nil {
		return nil, err
	}
	for _, s := range snap.Skipped() {
		fmt.Fprintf(stderr, "skipping %s\n", s)
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if name, err := load.NonEmpty(ctx); err != nil {
		return nil, err
	} else if name != "" {
		return nil, fmt.Errorf("the destination is not empty (table %s has rows): copy only into a new, empty database", name)
	}
	counts := make([]copyCount, len(tables))
	for i, t := range tables {
		counts[i].table = t.Name
		if counts[i].source, err = snap.Count(ctx, t.Name); err != nil {
			return nil, err
		}
	}
	// Every row is checked before anything is written, so a bad one is reported with all the
	// others instead of aborting the copy halfway through.
	if err := checkRows(ctx, snap, load, tables); err != nil {
		return nil, err
	}
	for i, t := range tables {
		progress.start(t.Name, counts[i].source)
		err := snap.Rows(ctx, t, copyBatch, func(rows [][]any) error {
			n, err := load.Insert(ctx, t, rows)
			counts[i].copied += n
			progress.addN(int64(len(rows)))
			return err
		})
		progress.finish()
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", t.Name, err)
		}
	}
	// The source's full-text index of messages is not copied: the destination's is made from the
	// copied messages, in the same transaction.
	docs, err := load.Finish(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "indexed %s messages for session search\n", commas(docs))
	for i, t := range tables {
		if counts[i].dest, err = load.Count(ctx, t.Name); err != nil {
			return nil, err
		}
	}
	return counts, nil
}

// copyCount is one table's rows in the source snapshot, copied, and in the destination.
type copyCount struct {
	table                string
	source, copied, dest int64
}

func (c copyCount) match() bool { return c.source == c.copied && c.copied == c.dest }

// printCounts writes the table of row counts.
func printCounts(w io.Writer, counts []copyCount) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tSQLITE\tPOSTGRES\t\t")
	for _, c := range counts {
		verdict := "ok"
		if !c.match() {
			verdict = fmt.Sprintf("DIFFERENT (%s copied)", commas(c.copied))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", c.table, commas(c.source), commas(c.dest), verdict)
	}
	return tw.Flush()
}
