package main

import (
	"flag"
	"fmt"

	"github.com/carryon-hub/carryon"
)

// versionFlag is --expected-version: the session version a write expects, so that a server run
// with --require-version accepts the CLI's writes and a stale one is refused instead of applied.
type versionFlag struct{ v int64 }

func (f *versionFlag) register(fs *flag.FlagSet, what string) {
	fs.Int64Var(&f.v, "expected-version", 0, "refuse the write unless the session is at this version ("+what+"); a server with --require-version needs it")
}

// get returns the expected version, nil when none was given; a version below 1 is a usage error.
func (f *versionFlag) get() (*int64, error) {
	switch {
	case f.v == 0:
		return nil, nil
	case f.v < 0:
		return nil, usagef("--expected-version must be a session version, 1 or more")
	}
	return carryon.Ptr(f.v), nil
}

// versionHint adds to a refusal for a missing or stale version, on the next line, what the user
// can do about it.
func versionHint(err error, sessionID string) error {
	switch carryon.ErrorCode(err) {
	case carryon.EVERSIONNEEDED:
		return fmt.Errorf("%w\n  pass --expected-version N; `carryon sessions show %s` shows the session's version", err, sessionID)
	case carryon.EVERSION:
		e, _ := carryon.AsError(err)
		return fmt.Errorf("%w\n  the session is at version %d: look at it again, then pass --expected-version %d", err, e.CurrentVersion, e.CurrentVersion)
	}
	return err
}
