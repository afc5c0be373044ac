// Package drivers compares the CPU cost of the two SQLite engines a Go program can use, on the
// statements of a carryon turn: modernc.org/sqlite (SQLite transpiled to Go, which carryon's
// store uses) and github.com/mattn/go-sqlite3 (SQLite in C through cgo). It is a module of its
// own so that carryon does not depend on cgo; its benchmarks are run by hand
// (docs/BENCHMARKS.md):
//
//	cd bench/drivers && go test -bench . -benchtime 20000x
package drivers
