// Package clustertest tests the fleet backend (plugins/temporal) against a
// real Temporal server in process: runs, streaming, files, at most once,
// cancellation, the escape suite, the worker's ceiling, logs, metrics and
// readiness, version skew, and doctor. It lives in the fleet example's
// module, with the server, so that the main module does not require
// go.temporal.io/server; `make test-fleet` runs it.
package clustertest
