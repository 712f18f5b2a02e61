// Package doccheck is where the documentation's Go snippets are compiled:
// the docs test (cmd/skillhost) overlays each snippet as a file of this
// package and builds it, so an example that no longer compiles fails the
// suite. It holds no code of its own.
package doccheck
