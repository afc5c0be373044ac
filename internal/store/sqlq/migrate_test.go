package sqlq

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestMigrations(t *testing.T) {
	d := &Dialect{Name: "test"}
	fsys := fstest.MapFS{
		"m/0010_ten.sql": {Data: []byte("SELECT 10")},
		"m/0002_two.sql": {Data: []byte("SELECT 2")},
		"m/0001_one.sql": {Data: []byte("SELECT 1")},
	}
	ms, err := d.Migrations(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Name+"="+m.SQL)
	}
	if strings.Join(got, ",") != "0001_one.sql=SELECT 1,0002_two.sql=SELECT 2,0010_ten.sql=SELECT 10" || ms[2].Version != 10 {
		t.Fatalf("Migrations = %v (versions %d, %d, %d)", got, ms[0].Version, ms[1].Version, ms[2].Version)
	}
	if Latest(ms) != 10 || Latest(nil) != 0 {
		t.Fatalf("Latest = %d, %d; want 10, 0", Latest(ms), Latest(nil))
	}
	for name, bad := range map[string]fstest.MapFS{
		"no number":   {"m/init.sql": {}},
		"zero":        {"m/0000_x.sql": {}},
		"not sql":     {"m/0001_x.txt": {}},
		"one version": {"m/0001_a.sql": {}, "m/01_b.sql": {}},
	} {
		if _, err := d.Migrations(bad, "m"); err == nil || !strings.HasPrefix(err.Error(), "test: ") {
			t.Errorf("%s: Migrations = %v, want an error of the driver", name, err)
		}
	}
}
