package flowcontrol

import (
	"context"
	"errors"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/bootstrap"
)

// Rejection reasons, as upstream labels apiserver_flowcontrol_rejected_requests_total.
const (
	ReasonQueueFull        = "queue-full"
	ReasonConcurrencyLimit = "concurrency-limit"
	ReasonTimeout          = "time-out"
	ReasonCancelled        = "cancelled"
)

// ErrRejected is returned (wrapped in a *Rejection) when a request is not
// admitted.
var ErrRejected = errors.New("flowcontrol: request rejected")

// Rejection says why a request was not admitted.
type Rejection struct{ Reason string }

func (r *Rejection) Error() string { return "flowcontrol: request rejected: " + r.Reason }
func (r *Rejection) Unwrap() error { return ErrRejected }

// Width is how much of a priority level's capacity a request occupies:
// Seats while it executes, then FinalSeats for AdditionalLatency after it
// (a mutation's watch notifications).
type Width struct {
	Seats             int
	FinalSeats        int
	AdditionalLatency time.Duration
}

// Classification is the result of [Controller.Classify].
type Classification struct {
	FlowSchema       string
	FlowSchemaUID    string
	PriorityLevel    string
	PriorityLevelUID string
	// Distinguisher is the flow's user or namespace part.
	Distinguisher string
	// Exempt: the level never queues.
	Exempt bool

	level    *level
	hashFlow uint64
	fm       *flowMetrics
	// fsUIDValues and plUIDValues are the kept header values of the two
	// UIDs (see FlowSchemaUIDValues); nil if none.
	fsUIDValues, plUIDValues []string
}

// FlowSchemaUIDValues is []string{c.FlowSchemaUID}, the value of the
// response header that names the schema: made once per schema and shared
// by its requests' responses (a slice per request was an allocation), so
// read only. A header map holding it may replace it or append to it (its
// capacity is 1), never write into it.
func (c *Classification) FlowSchemaUIDValues() []string {
	return uidValues(c.fsUIDValues, c.FlowSchemaUID)
}

// PriorityLevelUIDValues is []string{c.PriorityLevelUID}, kept and shared
// as FlowSchemaUIDValues.
func (c *Classification) PriorityLevelUIDValues() []string {
	return uidValues(c.plUIDValues, c.PriorityLevelUID)
}

// uidValues is kept if it holds just uid, else a new []string{uid}.
func uidValues(kept []string, uid string) []string {
	if len(kept) == 1 && kept[0] == uid {
		return kept[:1:1]
	}
	return []string{uid}
}

// Options configure a Controller.
type Options struct {
	// ServerConcurrencyLimit is the server's total seats (the two
	// max-in-flight limits summed). Must be positive.
	ServerConcurrencyLimit int
	// Metrics receives the apiserver_flowcontrol_* metrics; nil: none.
	Metrics *Metrics
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// QueueNote, if set, is told of each request that enters a queue
	// (delta 1) and of its leaving it (-1: dispatched, timed out or
	// cancelled), as upstream's filter is through its queue-note callback.
	// It is called with the level's lock held and must be quick.
	QueueNote func(desc *RequestDescription, delta int)
}

// Controller is the engine: the digested configuration and the state of
// every priority level. Safe for concurrent use.
type Controller struct {
	serverCL  int
	metrics   *Metrics
	now       func() time.Time
	queueNote func(desc *RequestDescription, delta int)

	mu      sync.Mutex
	schemas []*schema
	levels  map[string]*level
	// dangling are the schemas (by name) whose priority level is missing.
	dangling map[string]bool
	// catchAll is the catch-all schema, where requests no schema matches go.
	catchAll *schema
}

// New returns a Controller configured with the mandatory objects only (as
// upstream before its config controller has synced).
func New(o Options) *Controller {
	if o.ServerConcurrencyLimit <= 0 {
		o.ServerConcurrencyLimit = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{serverCL: o.ServerConcurrencyLimit, metrics: o.Metrics, now: o.Now, queueNote: o.QueueNote, levels: map[string]*level{}}
	c.Apply(nil, nil)
	return c
}

// ServerConcurrencyLimit is the total of seats.
func (c *Controller) ServerConcurrencyLimit() int { return c.serverCL }

// Apply replaces the configuration with the given objects (the mandatory
// ones are supplied when missing, as upstream). Levels keep their queues
// and executing requests across Apply; a removed level's outstanding
// requests finish on it. A new level, or one whose nominal limit changed,
// starts at its nominal limit until the next borrowing adjustment.
func (c *Controller) Apply(fss []*flowcontrolv1.FlowSchema, pls []*flowcontrolv1.PriorityLevelConfiguration) {
	havePL := map[string]bool{}
	for _, pl := range pls {
		havePL[pl.Name] = true
	}
	for _, m := range bootstrap.MandatoryPriorityLevelConfigurations() {
		if !havePL[m.Name] {
			pls = append(pls, m)
		}
	}
	haveFS := map[string]bool{}
	for _, fs := range fss {
		haveFS[fs.Name] = true
	}
	for _, m := range bootstrap.MandatoryFlowSchemas() {
		if !haveFS[m.Name] {
			fss = append(fss, m)
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	levels := make(map[string]*level, len(pls))
	var sumShares int
	for _, pl := range pls {
		sumShares += int(nominalShares(pl))
	}
	if sumShares == 0 {
		sumShares = 1
	}
	for _, pl := range pls {
		lv := c.levels[pl.Name]
		isNew := lv == nil
		if isNew {
			lv = &level{name: pl.Name, c: c, lastChange: now, gauges: c.metrics.forLevel(pl.Name)}
		}
		lv.configure(pl, c.serverCL, sumShares, isNew)
		levels[pl.Name] = lv
	}
	c.levels = levels

	schemas := make([]*schema, 0, len(fss))
	dangling := map[string]bool{}
	for _, fs := range fss {
		s := &schema{obj: fs, name: fs.Name, uid: string(fs.UID), uidValues: []string{string(fs.UID)}, prec: fs.Spec.MatchingPrecedence, plName: fs.Spec.PriorityLevelConfiguration.Name, rules: fs.Spec.Rules}
		if fs.Spec.DistinguisherMethod != nil {
			s.method = fs.Spec.DistinguisherMethod.Type
		}
		if levels[s.plName] == nil {
			dangling[fs.Name] = true
			continue
		}
		s.fm = c.metrics.forFlow(s.plName, s.name)
		schemas = append(schemas, s)
	}
	sortSchemas(schemas)
	c.schemas = schemas
	c.dangling = dangling
	c.catchAll = nil
	for _, s := range schemas {
		if s.name == flowcontrolv1.FlowSchemaNameCatchAll {
			c.catchAll = s
		}
	}
	var maxWaiting, maxExecuting int
	for _, lv := range levels {
		c.metrics.setConfigLimits(lv)
		w, e := lv.capacity()
		maxWaiting += w
		maxExecuting += e
	}
	c.metrics.setKindDenominators(maxWaiting, maxExecuting)
	// Upstream adjusts the limits whenever it digests a configuration.
	c.rebalanceLocked()
}

// Dangling reports whether the FlowSchema named name references a missing
// priority level (its Dangling condition).
func (c *Controller) Dangling(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dangling[name]
}

// Classify finds the first matching FlowSchema (upstream's order). The
// mandatory catch-all schema matches every authenticated or
// unauthenticated request; a request in neither group (none reaches the
// filter so in kapi) goes to catch-all as upstream's fallback does.
func (c *Controller) Classify(r *Request) Classification {
	c.mu.Lock()
	schemas, levels, catchAll := c.schemas, c.levels, c.catchAll
	c.mu.Unlock()
	for _, s := range schemas {
		if !s.matches(r) {
			continue
		}
		lv := levels[s.plName]
		d := flowDistinguisher(s.method, r)
		uid, uidValues, exempt := lv.identity()
		return Classification{
			FlowSchema: s.name, FlowSchemaUID: s.uid,
			PriorityLevel: lv.name, PriorityLevelUID: uid,
			Distinguisher: d, Exempt: exempt,
			level: lv, hashFlow: hashFlow(s.name, d), fm: s.fm,
			fsUIDValues: s.uidValues, plUIDValues: uidValues,
		}
	}
	lv := levels[flowcontrolv1.PriorityLevelConfigurationNameCatchAll]
	var fsUID string
	var fsUIDValues []string
	var fm *flowMetrics
	if catchAll != nil {
		fsUID, fsUIDValues, fm = catchAll.uid, catchAll.uidValues, catchAll.fm
	}
	uid, uidValues, _ := lv.identity()
	return Classification{
		FlowSchema: flowcontrolv1.FlowSchemaNameCatchAll, FlowSchemaUID: fsUID,
		PriorityLevel: lv.name, PriorityLevelUID: uid,
		Distinguisher: r.User,
		level:         lv, hashFlow: hashFlow(flowcontrolv1.FlowSchemaNameCatchAll, r.User), fm: fm,
		fsUIDValues: fsUIDValues, plUIDValues: uidValues,
	}
}

// hashFlow is FNV-1a of the schema name, a zero byte and the
// distinguisher (inline: no allocation).
func hashFlow(fs, distinguisher string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(fs); i++ {
		h = (h ^ uint64(fs[i])) * prime
	}
	h *= prime // the zero byte
	for i := 0; i < len(distinguisher); i++ {
		h = (h ^ uint64(distinguisher[i])) * prime
	}
	return h
}

// RequestDescription is what the debug dump of requests shows of a
// waiting or executing request.
type RequestDescription struct {
	User, Verb, Path, Namespace, Name, APIVersion, Resource, Subresource string
}

// Admit waits, bounded by wait (and ctx), until cls's priority level can
// execute a request of width w, and returns the ticket to Finish when it
// is done; or a *Rejection. Exempt levels admit at once.
func (c *Controller) Admit(ctx context.Context, cls Classification, w Width, wait time.Duration, desc RequestDescription) (*Ticket, error) {
	if w.Seats < 1 {
		w.Seats = 1
	}
	t, err := cls.level.admit(ctx, cls, w, wait, desc)
	if t != nil {
		t.watch = desc.Verb == "watch"
	}
	return t, err
}

// NoteEstimate records a classified request's work estimate (w) and, when
// sampled, the watch count it was made from, in the
// apiserver_flowcontrol_work_estimated_seats and _watch_count_samples
// metrics, as upstream does for every request it estimates (exempt,
// admitted or rejected).
func (c *Controller) NoteEstimate(cls Classification, w Width, watchCount int64, sampled bool) {
	c.metrics.estimated(cls, w, watchCount, sampled)
}

// Tick runs the periodic seat borrowing adjustment: each limited level's
// current limit moves within [nominal-lendable, nominal+borrowing limit]
// toward its recent seat demand (see allocation.go). Run it every
// AdjustmentPeriod.
func (c *Controller) Tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rebalanceLocked()
}

// AdjustmentPeriod is upstream's borrowing adjustment period.
const AdjustmentPeriod = 10 * time.Second

// Run calls Tick at once and then every period until ctx ends (as
// upstream's wait.Until).
func (c *Controller) Run(ctx context.Context, period time.Duration) {
	if period <= 0 {
		period = AdjustmentPeriod
	}
	c.Tick()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.Tick()
		}
	}
}

// LevelState is a snapshot of a priority level, for tests and dumps.
type LevelState struct {
	Name                                      string
	Exempt                                    bool
	NominalCL, LendableCL, BorrowingCL        int
	CurrentCL                                 int
	SeatsInUse, Executing, Waiting            int
	Dispatched, Rejected, TimedOut, Cancelled int64
}

// Levels returns a snapshot of every level, by name.
func (c *Controller) Levels() map[string]LevelState {
	c.mu.Lock()
	levels := c.levels
	c.mu.Unlock()
	out := make(map[string]LevelState, len(levels))
	for name, lv := range levels {
		out[name] = lv.state()
	}
	return out
}
