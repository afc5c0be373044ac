package schedules

import (
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
)

func cronSpec(t *testing.T, expr, zone string) *spec {
	t.Helper()
	sp, err := parseSpec(&carryon.Schedule{Cron: expr, Timezone: zone}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestDSTGap: a daily 02:30 in New York does not fire on the day the clocks jump from 02:00 to
// 03:00 (that time does not exist there); it fires the next day.
func TestDSTGap(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	sp := cronSpec(t, "30 2 * * *", "America/New_York")
	n, ok := sp.next(time.Date(2026, 3, 7, 12, 0, 0, 0, ny))
	if want := time.Date(2026, 3, 9, 2, 30, 0, 0, ny); !ok || !n.Equal(want) {
		t.Fatalf("next after Mar 7 noon = %s, want %s (Mar 8 02:30 does not exist)", n.In(ny), want)
	}
}

// TestDSTRepeat: a daily 01:30 fires once on the day 01:00–02:00 happens twice (at its first
// pass, daylight time); a cron of every hour fires in both passes.
func TestDSTRepeat(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	sp := cronSpec(t, "30 1 * * *", "America/New_York")
	first, _ := sp.next(time.Date(2026, 10, 31, 12, 0, 0, 0, ny))
	if want := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC); !first.Equal(want) {
		t.Fatalf("first = %s, want %s (01:30 EDT)", first, want)
	}
	second, _ := sp.next(first)
	if want := time.Date(2026, 11, 2, 1, 30, 0, 0, ny); !second.Equal(want) {
		t.Fatalf("after the first pass = %s, want %s (not 01:30 EST)", second.In(ny), want)
	}
	hourly := cronSpec(t, "30 * * * *", "America/New_York")
	a, _ := hourly.next(first.Add(-time.Minute))
	b, _ := hourly.next(a)
	if !a.Equal(first) || b.Sub(a) != time.Hour {
		t.Fatalf("hourly: %s then %s, want one hour apart through the repeat", a, b)
	}
}

// TestBadSpecs: every refusal says why.
func TestBadSpecs(t *testing.T) {
	for _, c := range []struct {
		s    carryon.Schedule
		want string
	}{
		{carryon.Schedule{Cron: "61 * * * *"}, "invalid cron"},
		{carryon.Schedule{Cron: "* * * *"}, "invalid cron"},
		{carryon.Schedule{Cron: "0 0 * * * *"}, "invalid cron"},
		{carryon.Schedule{Cron: "TZ=UTC 0 8 * * *"}, "timezone"},
		{carryon.Schedule{Cron: "0 8 * * *", Timezone: "Mars/Olympus"}, "unknown time zone"},
		{carryon.Schedule{Cron: "0 8 * * *", Timezone: "Local"}, "IANA"},
		{carryon.Schedule{Every: "30s"}, "minimum interval"},
		{carryon.Schedule{Every: "soon"}, "invalid every"},
		{carryon.Schedule{Every: "-5m"}, "invalid every"},
		{carryon.Schedule{}, "exactly one"},
		{carryon.Schedule{Cron: "0 8 * * *", Every: "1h"}, "exactly one"},
	} {
		_, err := parseSpec(&c.s, time.Minute)
		if carryon.ErrorCode(err) != carryon.EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %s mentioning %q", c.s, err, carryon.EINVALID, c.want)
		}
	}
}
