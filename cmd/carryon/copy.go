package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

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
	sdb.Close()
	pdb, err := postgres.Open(ctx, *to, postgres.WithMaxConns(2))
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	pdb.Close()

	reader, err := openSQLiteReader(src)
	if err != nil {
		return err
	}
	defer reader.Close()
	stx, err := reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite: begin read: %w", err)
	}
	defer stx.Rollback()
	conn, err := pgx.Connect(ctx, *to)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	ptx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))

	started := time.Now()
	tables, skipped, err := copyPlan(ctx, stx, ptx)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "skipping %s\n", s)
	}
	for _, t := range tables {
		if len(t.dropped) > 0 {
			fmt.Fprintf(stderr, "warning: %s: PostgreSQL has no column %s; its values are not copied\n", t.name, strings.Join(t.dropped, ", "))
		}
	}
	if err := checkEmpty(ctx, ptx); err != nil {
		return err
	}
	counts := make([]copyCount, len(tables))
	for i, t := range tables {
		counts[i].table = t.name
		if err := stx.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteSQLite(t.name)).Scan(&counts[i].source); err != nil {
			return fmt.Errorf("sqlite: count %s: %w", t.name, err)
		}
	}
	// Every row is checked before anything is written, so a bad one is reported with all the
	// others instead of aborting the copy halfway through.
	if err := checkRows(ctx, stx, tables); err != nil {
		return err
	}
	for i, t := range tables {
		progress.start(t.name, counts[i].source)
		n, err := copyRows(ctx, stx, ptx, t, progress)
		progress.finish()
		if err != nil {
			return fmt.Errorf("copy %s: %w", t.name, err)
		}
		counts[i].copied = n
	}
	// The source's full-text index of messages is not copied (an FTS5 table): the destination's
	// is made from the copied messages, in the same transaction.
	docs, err := postgres.RebuildSessionSearch(ctx, ptx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "indexed %s messages for session search\n", commas(docs))
	ok := true
	for i, t := range tables {
		if err := ptx.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{t.name}.Sanitize()).Scan(&counts[i].dest); err != nil {
			return fmt.Errorf("postgres: count %s: %w", t.name, err)
		}
		ok = ok && counts[i].match()
	}
	if err := printCounts(stdout, counts); err != nil {
		return err
	}
	if !ok {
		return errors.New("the row counts differ: the copy was rolled back and the destination is unchanged")
	}
	if err := ptx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	var total int64
	for _, c := range counts {
		total += c.dest
	}
	for _, t := range tables { // fresh planner statistics; a failure here loses nothing
		if _, err := conn.Exec(ctx, "ANALYZE "+pgx.Identifier{t.name}.Sanitize()); err != nil {
			fmt.Fprintf(stderr, "warning: analyze %s: %v\n", t.name, err)
		}
	}
	_, err = fmt.Fprintf(stdout, "copied %s rows in %d tables in %s; every count matches.\n"+
		"Workspace files are not in the database: copy the workspaces directory (by default %s)\nto the one the servers' --workspaces names, "+
		"then start them with --db and the PostgreSQL URL.\n",
		commas(total), len(tables), time.Since(started).Round(time.Millisecond), filepath.Join(filepath.Dir(src), "workspaces"))
	return err
}

// checkEmpty refuses a destination that has a row in any table but schema_migrations.
func checkEmpty(ctx context.Context, ptx pgx.Tx) error {
	rows, err := ptx.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'
		ORDER BY table_name`)
	if err != nil {
		return fmt.Errorf("postgres: list tables: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("postgres: list tables: %w", err)
	}
	for _, name := range names {
		var has bool
		if err := ptx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+pgx.Identifier{name}.Sanitize()+")").Scan(&has); err != nil {
			return fmt.Errorf("postgres: %s: %w", name, err)
		}
		if has {
			return fmt.Errorf("the destination is not empty (table %s has rows): copy only into a new, empty database", name)
		}
	}
	return nil
}

// copyRows streams one table from SQLite into PostgreSQL with COPY and returns how many rows
// PostgreSQL took.
func copyRows(ctx context.Context, stx *sql.Tx, ptx pgx.Tx, t *copyTable, progress *copyProgress) (int64, error) {
	rows, err := stx.QueryContext(ctx, t.selectSQL())
	if err != nil {
		return 0, fmt.Errorf("sqlite: read: %w", err)
	}
	defer rows.Close()
	names := make([]string, len(t.columns))
	for i, c := range t.columns {
		names[i] = c.name
	}
	raw := make([]any, len(t.columns))
	dest := make([]any, len(t.columns))
	for i := range raw {
		dest[i] = &raw[i]
	}
	var rowNum int64
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("sqlite: read: %w", err)
			}
			return nil, nil
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("sqlite: read: %w", err)
		}
		rowNum++
		out := make([]any, len(raw))
		for i, c := range t.columns {
			v, err := c.convert(raw[i])
			if err != nil {
				return nil, fmt.Errorf("row %d, column %s (SQLite %s to PostgreSQL %s): %w", rowNum, c.name, c.sqliteType, c.pgType, err)
			}
			out[i] = v
		}
		progress.add()
		return out, nil
	})
	n, err := ptx.CopyFrom(ctx, pgx.Identifier{t.name}, names, src)
	if err != nil {
		return n, fmt.Errorf("postgres: %w", err)
	}
	return n, nil
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
