package audit

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestContextMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	b := &memBackend{}
	for _, p := range []Policy{MetadataPolicy(), MetadataPolicy(), {Level: LevelNone}} {
		c := FromContext(WithContext(context.Background()))
		c.Begin(&Event{}, p, b, m)
		c.Emit(StageRequestReceived) // omitted by MetadataPolicy: not an event
		c.Emit(StageResponseComplete)
	}
	if got := counterValue(t, reg, "apiserver_audit_event_total", nil); got != 2 {
		t.Errorf("events: got %g, want 2", got)
	}
	if got := counterValue(t, reg, "apiserver_audit_level_total", map[string]string{"level": "Metadata"}); got != 2 {
		t.Errorf("level Metadata: got %g, want 2", got)
	}
	if got := counterValue(t, reg, "apiserver_audit_level_total", map[string]string{"level": "None"}); got != 1 {
		t.Errorf("level None: got %g, want 1", got)
	}
	if len(b.events) != 2 {
		t.Errorf("got %d events sent, want 2", len(b.events))
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestLogBackendErrors(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	// The buffered writer fails when it flushes: with an event larger
	// than its buffer, on the write itself.
	b := NewLogBackend(failingWriter{}, nil, discardLogger())
	b.SetMetrics(m)
	if err := b.Run(nil); err != nil {
		t.Fatal(err)
	}
	big := &Event{UserAgent: string(make([]byte, 128<<10))}
	if !b.ProcessEvents(big) {
		t.Fatal("event refused before Shutdown")
	}
	b.Shutdown()
	if b.ProcessEvents(&Event{}, &Event{}) {
		t.Error("events accepted after Shutdown")
	}
	// One event lost writing, two refused after Shutdown.
	if got := counterValue(t, reg, "apiserver_audit_error_total", map[string]string{"plugin": "log"}); got != 3 {
		t.Errorf("errors: got %g, want 3", got)
	}
}

// counterValue returns the value of the counter of family name with
// exactly labels.
func counterValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			if sameLabels(s.GetLabel(), labels) {
				return s.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func sameLabels(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if want[l.GetName()] != l.GetValue() {
			return false
		}
	}
	return true
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
