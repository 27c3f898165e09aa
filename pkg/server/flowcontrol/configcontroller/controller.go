package configcontroller

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	flowcontrolv1ac "k8s.io/client-go/applyconfigurations/flowcontrol/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	flowcontrollisters "k8s.io/client-go/listers/flowcontrol/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/internal/parallel"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/bootstrap"
)

// FieldManager is the field manager of the status writes (upstream's
// config consumer: a forced apply of the Dangling condition).
const FieldManager = "api-priority-and-fairness-config-consumer-v1"

// ProducerFieldManager is the field manager of the bootstrap
// configuration's creates and updates (upstream's ensurer).
const ProducerFieldManager = "api-priority-and-fairness-config-producer-v1"

// Controller feeds an engine from the API.
type Controller struct {
	client kubernetes.Interface
	engine *flowcontrol.Controller
	logger *slog.Logger

	fsLister flowcontrollisters.FlowSchemaLister
	plLister flowcontrollisters.PriorityLevelConfigurationLister
	kick     chan struct{}

	mu     sync.Mutex
	synced bool
	// cached: Start's informers have synced; ensures read them.
	cached bool

	// EnsureInterval is how often Run ensures the bootstrap objects again
	// (creates missing ones, restores auto-updated ones, removes unwanted
	// ones): upstream's producer does so every minute after the first
	// success (pkg/registry/flowcontrol/rest, ensureAPFBootstrapConfiguration).
	// New sets it to a minute; change it before Run.
	EnsureInterval time.Duration
}

// New returns a controller of engine on client.
func New(client kubernetes.Interface, engine *flowcontrol.Controller, logger *slog.Logger) *Controller {
	if logger == nil {
		logger = slog.Default()
	}
	return &Controller{client: client, engine: engine, logger: logger, kick: make(chan struct{}, 1), EnsureInterval: time.Minute}
}

// Synced reports whether the engine has had the API's configuration once.
func (c *Controller) Synced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.synced
}

// Ensure creates, updates and removes the bootstrap objects (see the
// package documentation), retrying until it succeeds or ctx ends.
func (c *Controller) Ensure(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := c.ensureOnce(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt%10 == 0 {
			c.logger.Warn("ensuring the API priority and fairness configuration failed, retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// shouldUpdateSpec is upstream's rule for a suggested object: its
// annotation if it is a boolean, else only while the object is at
// generation 1 (nobody changed it since it was created).
func shouldUpdateSpec(m metav1.Object) bool {
	if v, err := strconv.ParseBool(m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err == nil {
		return v
	}
	return m.GetGeneration() == 1
}

func withAutoUpdate(m *metav1.ObjectMeta) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "true"
}

func (c *Controller) ensureOnce(ctx context.Context) error {
	pls := c.client.FlowcontrolV1().PriorityLevelConfigurations()
	fss := c.client.FlowcontrolV1().FlowSchemas()
	// What exists is read from the informers once Start ran (as
	// upstream's ensurer reads its listers), else with one list per kind
	// rather than one GET per object; each object is ensured on its own,
	// several at a time: one request after another dominated the server's
	// start, which waits for this.
	plList, fsList, err := c.current(ctx)
	if err != nil {
		return err
	}
	havePL := map[string]*flowcontrolv1.PriorityLevelConfiguration{}
	for i := range plList.Items {
		havePL[plList.Items[i].Name] = &plList.Items[i]
	}
	haveFS := map[string]*flowcontrolv1.FlowSchema{}
	for i := range fsList.Items {
		haveFS[fsList.Items[i].Name] = &fsList.Items[i]
	}
	var work []func() error
	wantPL := map[string]bool{}
	for _, mandatory := range []bool{true, false} {
		list := bootstrap.SuggestedPriorityLevelConfigurations()
		if mandatory {
			list = bootstrap.MandatoryPriorityLevelConfigurations()
		}
		for _, want := range list {
			wantPL[want.Name] = true
			cur := havePL[want.Name]
			work = append(work, func() error { return ensurePriorityLevel(ctx, pls, want, cur, mandatory) })
		}
	}
	wantFS := map[string]bool{}
	for _, mandatory := range []bool{true, false} {
		list := bootstrap.SuggestedFlowSchemas()
		if mandatory {
			list = bootstrap.MandatoryFlowSchemas()
		}
		for _, want := range list {
			wantFS[want.Name] = true
			cur := haveFS[want.Name]
			work = append(work, func() error { return ensureFlowSchema(ctx, fss, want, cur, mandatory) })
		}
	}
	// The first error, in the order of work.
	for _, err := range parallel.Run(ensureWorkers, work) {
		if err != nil {
			return err
		}
	}
	return removeUnwanted(ctx, pls, fss, plList, fsList, wantPL, wantFS)
}

// current returns the priority levels and flow schemas that exist: the
// informers' (Start ran; items shared with their cache, read only) or
// listed. An ensure from a cache that lags behind a write sees a conflict
// or AlreadyExists, as from a list that raced it, and is retried.
func (c *Controller) current(ctx context.Context) (*flowcontrolv1.PriorityLevelConfigurationList, *flowcontrolv1.FlowSchemaList, error) {
	c.mu.Lock()
	cached := c.cached
	c.mu.Unlock()
	if cached {
		pls, err := c.plLister.List(labels.Everything())
		if err != nil {
			return nil, nil, fmt.Errorf("list cached prioritylevelconfigurations: %w", err)
		}
		fss, err := c.fsLister.List(labels.Everything())
		if err != nil {
			return nil, nil, fmt.Errorf("list cached flowschemas: %w", err)
		}
		plList := &flowcontrolv1.PriorityLevelConfigurationList{Items: make([]flowcontrolv1.PriorityLevelConfiguration, 0, len(pls))}
		for _, pl := range pls {
			plList.Items = append(plList.Items, *pl)
		}
		fsList := &flowcontrolv1.FlowSchemaList{Items: make([]flowcontrolv1.FlowSchema, 0, len(fss))}
		for _, fs := range fss {
			fsList.Items = append(fsList.Items, *fs)
		}
		return plList, fsList, nil
	}
	plList, err := c.client.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list prioritylevelconfigurations: %w", err)
	}
	fsList, err := c.client.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list flowschemas: %w", err)
	}
	return plList, fsList, nil
}

// ensureWorkers is how many objects ensureOnce works on at a time.
const ensureWorkers = 8

// ensurePriorityLevel makes want exist (cur: the object as listed, nil
// when missing).
func ensurePriorityLevel(ctx context.Context, pls flowcontrolclient.PriorityLevelConfigurationInterface, want, cur *flowcontrolv1.PriorityLevelConfiguration, mandatory bool) error {
	if cur == nil {
		if _, err := pls.Create(ctx, want, metav1.CreateOptions{FieldManager: ProducerFieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create prioritylevelconfiguration %s: %w", want.Name, err)
		}
		return nil
	}
	if !mandatory && !shouldUpdateSpec(cur) {
		return nil
	}
	spec := want.Spec.DeepCopy()
	if want.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt && cur.Spec.Exempt != nil {
		// The exempt level's exempt section is the operator's.
		spec.Exempt = cur.Spec.Exempt.DeepCopy()
	}
	if apiequality.Semantic.DeepEqual(cur.Spec, *spec) && cur.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] == "true" {
		return nil
	}
	upd := cur.DeepCopy()
	upd.Spec = *spec
	withAutoUpdate(&upd.ObjectMeta)
	if _, err := pls.Update(ctx, upd, metav1.UpdateOptions{FieldManager: ProducerFieldManager}); err != nil {
		return fmt.Errorf("update prioritylevelconfiguration %s: %w", want.Name, err)
	}
	return nil
}

// ensureFlowSchema makes want exist (cur: the object as listed, nil when
// missing).
func ensureFlowSchema(ctx context.Context, fss flowcontrolclient.FlowSchemaInterface, want, cur *flowcontrolv1.FlowSchema, mandatory bool) error {
	if cur == nil {
		if _, err := fss.Create(ctx, want, metav1.CreateOptions{FieldManager: ProducerFieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create flowschema %s: %w", want.Name, err)
		}
		return nil
	}
	if !mandatory && !shouldUpdateSpec(cur) {
		return nil
	}
	if apiequality.Semantic.DeepEqual(cur.Spec, want.Spec) && cur.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] == "true" {
		return nil
	}
	upd := cur.DeepCopy()
	upd.Spec = *want.Spec.DeepCopy()
	withAutoUpdate(&upd.ObjectMeta)
	if _, err := fss.Update(ctx, upd, metav1.UpdateOptions{FieldManager: ProducerFieldManager}); err != nil {
		return fmt.Errorf("update flowschema %s: %w", want.Name, err)
	}
	return nil
}

// removable is upstream's rule for an object the ensurer no longer wants
// (RemoveUnwantedObjects in kubernetes/pkg/registry/flowcontrol/ensurer,
// v1.37.2): deleted only when its autoupdate-spec annotation parses as a
// true boolean ("true", "True", "1", "t", ...); kept when the annotation is
// absent (the operator's object), malformed or false.
func removable(m metav1.Object) bool {
	v, err := strconv.ParseBool(m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey])
	return err == nil && v
}

// removeUnwanted deletes the auto-updated objects not in wantPL and wantFS.
func removeUnwanted(ctx context.Context, pls flowcontrolclient.PriorityLevelConfigurationInterface, fss flowcontrolclient.FlowSchemaInterface,
	plList *flowcontrolv1.PriorityLevelConfigurationList, fsList *flowcontrolv1.FlowSchemaList, wantPL, wantFS map[string]bool) error {
	// Objects upstream once suggested and no longer does: removed when
	// they are still auto-updated.
	for i := range plList.Items {
		pl := &plList.Items[i]
		if !wantPL[pl.Name] && removable(pl) {
			if err := pls.Delete(ctx, pl.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &pl.ResourceVersion}}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return fmt.Errorf("delete prioritylevelconfiguration %s: %w", pl.Name, err)
			}
		}
	}
	for i := range fsList.Items {
		fs := &fsList.Items[i]
		if !wantFS[fs.Name] && removable(fs) {
			if err := fss.Delete(ctx, fs.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &fs.ResourceVersion}}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return fmt.Errorf("delete flowschema %s: %w", fs.Name, err)
			}
		}
	}
	return nil
}

// Start starts the informers; Run applies what they see, and ensures
// read what exists from them once they have synced. Start returns once the
// informers have synced (or ctx ended).
func (c *Controller) Start(ctx context.Context) {
	f := informers.NewSharedInformerFactory(c.client, 0)
	fsInf := f.Flowcontrol().V1().FlowSchemas()
	plInf := f.Flowcontrol().V1().PriorityLevelConfigurations()
	c.fsLister, c.plLister = fsInf.Lister(), plInf.Lister()
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.poke() },
		UpdateFunc: func(any, any) { c.poke() },
		DeleteFunc: func(any) { c.poke() },
	}
	_, _ = fsInf.Informer().AddEventHandler(h)
	_, _ = plInf.Informer().AddEventHandler(h)
	// With the context, not ctx.Done(): contexts derived from a channel's
	// context cost a goroutine each (it is not a cancelCtx).
	f.StartWithContext(ctx)
	if f.WaitForCacheSyncWithContext(ctx).Err == nil {
		c.mu.Lock()
		c.cached = true
		c.mu.Unlock()
	}
	go func() {
		<-ctx.Done()
		f.Shutdown()
	}()
}

func (c *Controller) poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Run applies the informers' objects to the engine on every change and
// keeps the Dangling conditions, and ensures the bootstrap objects every
// EnsureInterval, until ctx ends. Start must have run.
func (c *Controller) Run(ctx context.Context) {
	go c.ensurePeriodically(ctx)
	c.poke()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		if err := c.sync(ctx); err != nil && ctx.Err() == nil {
			if apierrors.IsConflict(err) {
				// A status write raced an update of the schema (the
				// ensurer's, at start): the informer brings the new
				// version and the retry below writes again.
				c.logger.Debug("API priority and fairness status write conflicted, retrying", "err", err)
			} else {
				c.logger.Warn("API priority and fairness config sync failed", "err", err)
			}
			// Retry later.
			go func() {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
					c.poke()
				}
			}()
		}
	}
}

// ensurePeriodically runs the ensurer every EnsureInterval until ctx ends;
// a failure is logged and tried again at the next tick.
func (c *Controller) ensurePeriodically(ctx context.Context) {
	if c.EnsureInterval <= 0 {
		return
	}
	t := time.NewTicker(c.EnsureInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := c.ensureOnce(ctx); err != nil && ctx.Err() == nil {
			c.logger.Warn("ensuring the API priority and fairness configuration failed, will retry", "err", err)
		}
	}
}

func (c *Controller) sync(ctx context.Context) error {
	fss, err := c.fsLister.List(labels.Everything())
	if err != nil {
		return err
	}
	pls, err := c.plLister.List(labels.Everything())
	if err != nil {
		return err
	}
	c.engine.Apply(fss, pls)
	c.mu.Lock()
	c.synced = true
	c.mu.Unlock()
	havePL := map[string]bool{}
	for _, pl := range pls {
		havePL[pl.Name] = true
	}
	var firstErr error
	for _, fs := range fss {
		want := danglingCondition(fs, havePL[fs.Spec.PriorityLevelConfiguration.Name])
		if cur := findCondition(fs); cur != nil && cur.Status == want.Status && cur.Reason == want.Reason && cur.Message == want.Message {
			continue
		}
		// Upstream's consumer applies the condition alone, forced.
		want.LastTransitionTime = metav1.Now()
		apply := flowcontrolv1ac.FlowSchema(fs.Name).WithStatus(flowcontrolv1ac.FlowSchemaStatus().WithConditions(
			flowcontrolv1ac.FlowSchemaCondition().WithType(want.Type).WithStatus(want.Status).WithReason(want.Reason).
				WithLastTransitionTime(want.LastTransitionTime).WithMessage(want.Message)))
		if _, err := c.client.FlowcontrolV1().FlowSchemas().ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil && !apierrors.IsNotFound(err) && firstErr == nil {
			firstErr = fmt.Errorf("status of flowschema %s: %w", fs.Name, err)
		}
	}
	return firstErr
}

// danglingCondition is upstream's condition for a schema whose priority
// level exists (False, "Found") or not (True, "NotFound").
func danglingCondition(fs *flowcontrolv1.FlowSchema, found bool) flowcontrolv1.FlowSchemaCondition {
	pl := fs.Spec.PriorityLevelConfiguration.Name
	if found {
		return flowcontrolv1.FlowSchemaCondition{
			Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse, Reason: "Found",
			Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", pl),
		}
	}
	return flowcontrolv1.FlowSchemaCondition{
		Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue, Reason: "NotFound",
		Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", pl),
	}
}

func findCondition(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchemaCondition {
	for i := range fs.Status.Conditions {
		if fs.Status.Conditions[i].Type == flowcontrolv1.FlowSchemaConditionDangling {
			return &fs.Status.Conditions[i]
		}
	}
	return nil
}
