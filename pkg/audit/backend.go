package audit

// Backend receives audit events.
//
// Contract: ProcessEvents is safe for concurrent use and never keeps a
// reference to data the caller changes later (the audit Context sends
// snapshots). Run starts the backend's workers without blocking and is
// called once, before serving; Shutdown is called once, after the in-flight
// requests have drained, blocks until every event accepted by ProcessEvents
// has been written, and releases the backend's resources. ProcessEvents after
// Shutdown returns false and drops the events.
type Backend interface {
	// ProcessEvents queues events. It reports whether all were accepted.
	ProcessEvents(events ...*Event) bool
	// Run starts the backend. stopCh is closed when the server has drained
	// its in-flight requests; the backend keeps accepting events until
	// Shutdown.
	Run(stopCh <-chan struct{}) error
	// Shutdown flushes every accepted event and releases resources.
	Shutdown()
}
