// Package healthz implements the /healthz, /livez and /readyz endpoints of a
// kapi server (spec/health.md).
//
// Each endpoint is a fixed, ordered list of named checks ([HealthChecker]).
// [InstallPathHandler] installs the aggregate handler at /<ep>, which runs
// every check in order and answers 200 "ok" or 500 with one line per check,
// and one handler per check at /<ep>/<name>, which shows the real error.
// The query parameters "verbose" and "exclude" shape the aggregate answer.
//
// [Registry] holds the list of one endpoint until it is installed (the list
// is then frozen), and [Endpoints] keeps the three lists of one server and
// applies the /livez grace period to boot-sequence checks ([DelayedHealthCheck]).
//
// Nothing here is process-global: metrics go to a caller-supplied
// prometheus.Registerer ([NewMetrics]) and the log check's flusher goroutine
// is owned by the [LogCheck] that started it ([LogCheck.Stop]).
package healthz
