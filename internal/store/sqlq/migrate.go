package sqlq

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migration is one schema change of a driver: a file NNNN_name.sql of its embedded migrations,
// applied in the order of NNNN. The files are each driver's own (the schemas differ in types and
// indexes); the runner below is shared.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations reads the migration files of dir in fsys, ordered by version.
func (d *Dialect) Migrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: read migrations: %w", d.Name, err)
	}
	var ms []Migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("%s: bad migration file name %q", d.Name, e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%s: read migration %s: %w", d.Name, e.Name(), err)
		}
		ms = append(ms, Migration{Version: v, Name: e.Name(), SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("%s: migrations %s and %s have one version", d.Name, ms[i-1].Name, ms[i].Name)
		}
	}
	return ms, nil
}

// Latest returns the highest version of ms, 0 for none.
func Latest(ms []Migration) int {
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// ApplyMigrations applies, in c's transaction and in order, each of ms that the table
// schema_migrations (which must exist) does not list, and lists it there with the time now. A
// migration's text runs as it is (Conn.ExecScript), so it may hold several statements.
func (d *Dialect) ApplyMigrations(ctx context.Context, c Conn, ms []Migration, now time.Time) error {
	for _, m := range ms {
		var applied int
		if err := c.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&applied); err != nil {
			return fmt.Errorf("%s: migration %s: %w", d.Name, m.Name, err)
		}
		if applied > 0 {
			continue
		}
		if err := c.ExecScript(ctx, m.SQL); err != nil {
			return fmt.Errorf("%s: migration %s: %w", d.Name, m.Name, err)
		}
		if _, err := c.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, Micros(now)); err != nil {
			return fmt.Errorf("%s: migration %s: %w", d.Name, m.Name, err)
		}
	}
	return nil
}
