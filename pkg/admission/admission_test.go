package admission

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// fakeValidator handles the operations in ops and rejects names in deny.
type fakeValidator struct {
	name  string
	ops   map[Operation]bool
	deny  map[string]bool
	calls int
}

func (f *fakeValidator) Name() string              { return f.name }
func (f *fakeValidator) Handles(op Operation) bool { return f.ops[op] }
func (f *fakeValidator) Validate(_ context.Context, a Attributes) error {
	f.calls++
	if f.deny[a.Name] {
		return errors.New("denied")
	}
	return nil
}

func TestChainMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	first := &fakeValidator{name: "First", ops: map[Operation]bool{Create: true, Delete: true}, deny: map[string]bool{"bad": true}}
	second := &fakeValidator{name: "Second", ops: map[Operation]bool{Create: true}}
	c := NewChain(m, first, nil, second)
	ctx := context.Background()
	if err := c.Validate(ctx, Attributes{Operation: Create, Name: "ok"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(ctx, Attributes{Operation: Create, Name: "bad"}); err == nil {
		t.Fatal("bad: got no error")
	}
	if err := c.Validate(ctx, Attributes{Operation: Delete, Name: "ok"}); err != nil {
		t.Fatal(err)
	}
	if second.calls != 1 {
		t.Errorf("second validator: got %d calls, want 1 (not after a rejection, not on delete)", second.calls)
	}
	if c.Handles(Update) || !c.Handles(Delete) {
		t.Errorf("Handles: got update %v delete %v, want false true", c.Handles(Update), c.Handles(Delete))
	}

	wantSteps := []string{
		`operation="CREATE",rejected="false",type="validate" 1`,
		`operation="CREATE",rejected="true",type="validate" 1`,
		`operation="DELETE",rejected="false",type="validate" 1`,
	}
	for _, name := range []string{"apiserver_admission_step_admission_duration_seconds", "apiserver_admission_step_admission_duration_seconds_summary"} {
		if got := gather(t, reg, name); strings.Join(got, ";") != strings.Join(wantSteps, ";") {
			t.Errorf("%s: got %q, want %q", name, got, wantSteps)
		}
	}
	wantControllers := []string{
		`name="First",operation="CREATE",rejected="false",type="validate" 1`,
		`name="First",operation="CREATE",rejected="true",type="validate" 1`,
		`name="First",operation="DELETE",rejected="false",type="validate" 1`,
		`name="Second",operation="CREATE",rejected="false",type="validate" 1`,
	}
	if got := gather(t, reg, "apiserver_admission_controller_admission_duration_seconds"); strings.Join(got, ";") != strings.Join(wantControllers, ";") {
		t.Errorf("got %q, want %q", got, wantControllers)
	}
}

func TestChainWithoutMetrics(t *testing.T) {
	var zero Chain
	if zero.Handles(Create) {
		t.Error("the zero chain handles create")
	}
	if err := zero.Validate(context.Background(), Attributes{Operation: Create}); err != nil {
		t.Errorf("the zero chain: %v", err)
	}
	v := &fakeValidator{name: "V", ops: map[Operation]bool{Create: true}, deny: map[string]bool{"x": true}}
	if err := NewChain(nil, v).Validate(context.Background(), Attributes{Operation: Create, Name: "x"}); err == nil {
		t.Error("got no error from the denying validator")
	}
}

// gather returns the series of family name as `l1="v1",... count`, sorted.
func gather(t *testing.T, reg *prometheus.Registry, name string) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			count := s.GetHistogram().GetSampleCount()
			if s.Summary != nil {
				count = s.GetSummary().GetSampleCount()
			}
			out = append(out, fmt.Sprintf("%s %d", strings.Join(labels, ","), count))
		}
	}
	sort.Strings(out)
	return out
}

// namedValidator handles every operation and rejects names in deny; it
// keeps no state, so goroutines may share it.
type namedValidator struct {
	name string
	deny map[string]bool
}

func (v namedValidator) Name() string           { return v.name }
func (v namedValidator) Handles(Operation) bool { return true }
func (v namedValidator) Admit(ctx context.Context, a Attributes) error {
	return v.Validate(ctx, a)
}
func (v namedValidator) Validate(_ context.Context, a Attributes) error {
	if v.deny[a.Name] {
		return errors.New("denied")
	}
	return nil
}

// The series a chain observes are looked up once and then reused: every
// observation still lands in its own series, from any goroutine, for the
// step and the controller metrics, for both phases.
func TestChainMetricsRepeatedConcurrently(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	c := NewChain(m, namedValidator{name: "A"}, namedValidator{name: "B", deny: map[string]bool{"bad": true}})
	ctx := context.Background()
	const goroutines, rounds = 4, 25
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		go func() {
			for i := 0; i < rounds; i++ {
				if err := c.Admit(ctx, Attributes{Operation: Update, Name: "ok"}); err != nil {
					errs <- err
					return
				}
				if err := c.Validate(ctx, Attributes{Operation: Update, Name: "ok"}); err != nil {
					errs <- err
					return
				}
				if err := c.Validate(ctx, Attributes{Operation: Create, Name: "bad"}); err == nil {
					errs <- errors.New("bad: got no error")
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < goroutines; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	n := goroutines * rounds
	wantSteps := []string{
		fmt.Sprintf(`operation="CREATE",rejected="true",type="validate" %d`, n),
		fmt.Sprintf(`operation="UPDATE",rejected="false",type="admit" %d`, n),
		fmt.Sprintf(`operation="UPDATE",rejected="false",type="validate" %d`, n),
	}
	for _, name := range []string{"apiserver_admission_step_admission_duration_seconds", "apiserver_admission_step_admission_duration_seconds_summary"} {
		if got := gather(t, reg, name); strings.Join(got, ";") != strings.Join(wantSteps, ";") {
			t.Errorf("%s: got %q, want %q", name, got, wantSteps)
		}
	}
	wantControllers := []string{
		fmt.Sprintf(`name="A",operation="CREATE",rejected="false",type="validate" %d`, n),
		fmt.Sprintf(`name="A",operation="UPDATE",rejected="false",type="admit" %d`, n),
		fmt.Sprintf(`name="A",operation="UPDATE",rejected="false",type="validate" %d`, n),
		fmt.Sprintf(`name="B",operation="CREATE",rejected="true",type="validate" %d`, n),
		fmt.Sprintf(`name="B",operation="UPDATE",rejected="false",type="admit" %d`, n),
		fmt.Sprintf(`name="B",operation="UPDATE",rejected="false",type="validate" %d`, n),
	}
	if got := gather(t, reg, "apiserver_admission_controller_admission_duration_seconds"); strings.Join(got, ";") != strings.Join(wantControllers, ";") {
		t.Errorf("got %q, want %q", got, wantControllers)
	}
}

// BenchmarkChainValidateMetrics is one validating step of three plugins
// with metrics, as an update of a custom resource runs it.
func BenchmarkChainValidateMetrics(b *testing.B) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	c := NewChain(m, namedValidator{name: "A"}, namedValidator{name: "B"}, namedValidator{name: "C"})
	ctx := context.Background()
	a := Attributes{Operation: Update, Name: "ok"}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Validate(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

// readerValidator is a validator that says whether it reads objects.
type readerValidator struct {
	namedValidator
	ops   map[Operation]bool
	reads bool
}

func (v readerValidator) Handles(op Operation) bool    { return v.ops[op] }
func (v readerValidator) ReadsObjects(Attributes) bool { return v.reads }

// The chain's validation reads a request's objects if any validator that
// handles the operation may: one that does not say (no ObjectReader), or
// one that says it does; validators of other operations do not count.
func TestChainValidationReadsObjects(t *testing.T) {
	upd := map[Operation]bool{Update: true}
	quiet := readerValidator{namedValidator: namedValidator{name: "quiet"}, ops: upd}
	reader := readerValidator{namedValidator: namedValidator{name: "reader"}, ops: upd, reads: true}
	createOnly := namedValidatorFor{namedValidator{name: "create"}, Create}
	a := Attributes{Operation: Update}
	for _, tc := range []struct {
		name    string
		plugins []Plugin
		want    bool
	}{
		{name: "no plugins"},
		{name: "quiet validators", plugins: []Plugin{quiet, quiet}},
		{name: "a reader", plugins: []Plugin{quiet, reader}, want: true},
		{name: "a validator that does not say", plugins: []Plugin{quiet, namedValidator{name: "unsaid"}}, want: true},
		{name: "a validator of other operations", plugins: []Plugin{quiet, createOnly}},
	} {
		if got := NewChain(nil, tc.plugins...).ValidationReadsObjects(a); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	var zero Chain
	if zero.ValidationReadsObjects(a) {
		t.Error("the zero chain reads objects")
	}
}

// namedValidatorFor is a namedValidator handling one operation only.
type namedValidatorFor struct {
	namedValidator
	op Operation
}

func (v namedValidatorFor) Handles(op Operation) bool { return op == v.op }
