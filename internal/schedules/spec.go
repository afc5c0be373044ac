package schedules

import (
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/robfig/cron/v3"
)

// cronParser reads the standard 5 fields (minute, hour, day of month, month, day of week) and the
// descriptors (@daily, @hourly, …); no seconds field.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// maxSkips bounds the ticks a claim steps over to find the latest one due (a cron of every
// minute down for almost two years); past it the schedule restarts from the next tick after now.
const maxSkips = 1 << 20

// spec is a schedule's timing, parsed: exactly one of cron, every and at.
type spec struct {
	cron   cron.Schedule
	every  time.Duration
	at     *time.Time
	loc    *time.Location
	anchor time.Time // every: ticks are anchor + k·every
	until  *time.Time
}

// loadZone returns the IANA zone name (default UTC). EINVALID for an unknown one.
func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name == "Local" {
		return nil, carryon.Errorf(carryon.EINVALID, "timezone must be an IANA zone name such as Europe/Paris, not Local (the server's zone)")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, carryon.Errorf(carryon.EINVALID, "unknown time zone %q: give an IANA zone name such as Europe/Paris or UTC", name)
	}
	return loc, nil
}

// parseSpec reads the timing of s. EINVALID with the reason.
func parseSpec(s *carryon.Schedule, minEvery time.Duration) (*spec, error) {
	n := 0
	for _, set := range []bool{s.Cron != "", s.Every != "", s.At != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, carryon.Errorf(carryon.EINVALID, "give exactly one of cron, every and at")
	}
	loc, err := loadZone(s.Timezone)
	if err != nil {
		return nil, err
	}
	sp := &spec{loc: loc, anchor: s.CreatedAt, until: s.Until}
	switch {
	case s.Cron != "":
		text := strings.TrimSpace(s.Cron)
		if strings.HasPrefix(text, "TZ=") || strings.HasPrefix(text, "CRON_TZ=") {
			return nil, carryon.Errorf(carryon.EINVALID, "invalid cron %q: give the zone in timezone, not in the expression", s.Cron)
		}
		if strings.HasPrefix(text, "@every") {
			return nil, carryon.Errorf(carryon.EINVALID, "invalid cron %q: use every for intervals", s.Cron)
		}
		c, err := cronParser.Parse(text)
		if err != nil {
			return nil, carryon.Errorf(carryon.EINVALID, "invalid cron %q: %v (5 fields: minute hour day-of-month month day-of-week)", s.Cron, err)
		}
		sp.cron = c
	case s.Every != "":
		d, err := time.ParseDuration(s.Every)
		if err != nil || d <= 0 {
			return nil, carryon.Errorf(carryon.EINVALID, "invalid every %q: give a positive duration such as 90s, 15m or 2h", s.Every)
		}
		if d < minEvery {
			return nil, carryon.Errorf(carryon.EINVALID, "every %s is under this server's minimum interval of %s", d, minEvery)
		}
		sp.every = d
	default:
		at := s.At.UTC()
		sp.at = &at
	}
	return sp, nil
}

// next returns the first tick strictly after t, and false when there is none (an at that
// passed, or a tick after until).
func (sp *spec) next(t time.Time) (time.Time, bool) {
	var n time.Time
	switch {
	case sp.cron != nil:
		n = sp.cron.Next(t.In(sp.loc))
		for i := 0; i < 4 && !n.IsZero() && sp.skipsRepeat() && repeated(n.In(sp.loc)); i++ {
			n = sp.cron.Next(n) // the second pass of a wall-clock time the zone repeats
		}
		if n.IsZero() {
			return time.Time{}, false
		}
		n = n.UTC()
	case sp.every > 0:
		if t.Before(sp.anchor) {
			n = sp.anchor
		} else {
			k := t.Sub(sp.anchor)/sp.every + 1
			n = sp.anchor.Add(k * sp.every)
		}
	default:
		if !t.Before(*sp.at) {
			return time.Time{}, false
		}
		n = *sp.at
	}
	if sp.until != nil && n.After(*sp.until) {
		return time.Time{}, false
	}
	return n, true
}

// latest returns the latest tick at or before now, starting from the due tick first (which is
// at or before now), the first tick after now (ok false when none), and how many ticks it
// stepped over.
func (sp *spec) latest(first, now time.Time) (tick, after time.Time, ok bool, skipped int) {
	tick = first
	for {
		n, more := sp.next(tick)
		if !more {
			return tick, time.Time{}, false, skipped
		}
		if n.After(now) {
			return tick, n, true, skipped
		}
		if sp.every > 0 { // jump straight to the last interval at or before now
			k := now.Sub(sp.anchor) / sp.every
			last := sp.anchor.Add(k * sp.every)
			if last.After(tick) {
				skipped += int((last.Sub(tick)) / sp.every)
				tick = last
				continue
			}
		}
		skipped++
		tick = n
		if skipped > maxSkips {
			a, more := sp.next(now)
			return tick, a, more, skipped
		}
	}
}

// skipsRepeat says whether a cron fires once at a wall-clock time that the zone repeats when its
// clocks go back: when its hour field names some hours only (as cron(8) does); a cron of every
// hour fires in both passes, keeping its interval.
func (sp *spec) skipsRepeat() bool {
	ss, ok := sp.cron.(*cron.SpecSchedule)
	return ok && ss.Hour&(1<<24-1) != 1<<24-1
}

// repeated reports whether the wall-clock time of t occurred already, earlier by a shift of the
// zone's clocks (one hour or half an hour): t is the second pass of that time.
func repeated(t time.Time) bool {
	for _, shift := range []time.Duration{time.Hour, 30 * time.Minute} {
		e := t.Add(-shift).In(t.Location())
		if e.Hour() == t.Hour() && e.Minute() == t.Minute() && e.Day() == t.Day() {
			return true
		}
	}
	return false
}
