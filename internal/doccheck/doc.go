// Package doccheck holds the test that keeps docs/ARCHITECTURE.md true to the tree: every file and
// package it names exists. It has no code of its own.
package doccheck
