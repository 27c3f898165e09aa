// Package limitranger is the LimitRanger admission plugin: the LimitRanges
// of a pod's namespace give its containers default requests and limits
// (Admit) and bound them, the pod's total and PVC storage requests
// (Validate: min, max, maxLimitRequestRatio), with upstream's messages
// (kubernetes/kubernetes plugin/pkg/admission/limitranger/admission.go).
package limitranger

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "LimitRanger"

// Annotation records on a pod which defaults the plugin set.
const Annotation = "kubernetes.io/limit-ranger"

// Lister lists the LimitRanges of a namespace (a *corev1.LimitRangeList).
type Lister interface {
	List(ctx context.Context, namespace string) (runtime.Object, error)
}

// Plugin is the LimitRanger admission plugin.
type Plugin struct{ limits Lister }

// New returns the plugin reading LimitRanges through l.
func New(l Lister) *Plugin { return &Plugin{limits: l} }

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates and updates.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// supports reports whether a is about a pod (create only: containers are
// immutable, so an update could not be changed or need checking) or a PVC.
func supports(a admission.Attributes) bool {
	if a.Subresource != "" || a.Resource.Group != "" || a.Object == nil {
		return false
	}
	switch a.Resource.Resource {
	case "pods":
		return a.Operation == admission.Create
	case "persistentvolumeclaims":
		return true
	}
	return false
}

func (p *Plugin) ranges(ctx context.Context, a admission.Attributes) ([]corev1.LimitRange, error) {
	if !supports(a) || p.limits == nil {
		return nil, nil
	}
	// Objects being deleted are left alone.
	if a.OldObject != nil {
		if m, err := meta.Accessor(a.OldObject); err == nil && m.GetDeletionTimestamp() != nil {
			return nil, nil
		}
	}
	obj, err := p.limits.List(ctx, a.Namespace)
	if err != nil {
		return nil, admission.NewForbidden(a, fmt.Errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.Operation, a.Resource))
	}
	list, ok := obj.(*corev1.LimitRangeList)
	if !ok {
		return nil, fmt.Errorf("limitranger: listed a %T", obj)
	}
	return list.Items, nil
}

// Admit sets the containers' default requests and limits.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes) error {
	items, err := p.ranges(ctx, a)
	if err != nil || len(items) == 0 {
		return err
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	for i := range items {
		mutatePod(&items[i], pod)
	}
	return nil
}

// Validate checks the bounds of every LimitRange.
// ReadsObjects implements admission.ObjectReader: only pods and
// persistent volume claims are checked (supports).
func (p *Plugin) ReadsObjects(a admission.Attributes) bool {
	if a.Subresource != "" || a.Resource.Group != "" || p.limits == nil {
		return false
	}
	return a.Resource.Resource == "pods" || a.Resource.Resource == "persistentvolumeclaims"
}

func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	items, err := p.ranges(ctx, a)
	if err != nil || len(items) == 0 {
		return err
	}
	for i := range items {
		var err error
		switch obj := a.Object.(type) {
		case *corev1.Pod:
			err = validatePod(&items[i], obj)
		case *corev1.PersistentVolumeClaim:
			err = validatePVC(&items[i], obj)
		}
		if err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

// mutatePod gives every container the Container defaults of lr it lacks,
// recording what was set in the kubernetes.io/limit-ranger annotation.
func mutatePod(lr *corev1.LimitRange, pod *corev1.Pod) {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range item.DefaultRequest {
			requests[k] = v.DeepCopy()
		}
		for k, v := range item.Default {
			limits[k] = v.DeepCopy()
		}
	}
	var notes []string
	for i := range pod.Spec.Containers {
		notes = mergeDefaults(&pod.Spec.Containers[i], requests, limits, "container", notes)
	}
	for i := range pod.Spec.InitContainers {
		notes = mergeDefaults(&pod.Spec.InitContainers[i], requests, limits, "init container", notes)
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[Annotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

func mergeDefaults(c *corev1.Container, requests, limits corev1.ResourceList, what string, notes []string) []string {
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	var setRequests, setLimits []string
	for k, v := range limits {
		if _, ok := c.Resources.Limits[k]; !ok {
			c.Resources.Limits[k] = v.DeepCopy()
			setLimits = append(setLimits, string(k))
		}
	}
	for k, v := range requests {
		if _, ok := c.Resources.Requests[k]; !ok {
			c.Resources.Requests[k] = v.DeepCopy()
			setRequests = append(setRequests, string(k))
		}
	}
	if len(setRequests) > 0 {
		sort.Strings(setRequests)
		notes = append(notes, fmt.Sprintf("%s request for %s %s", strings.Join(setRequests, ", "), what, c.Name))
	}
	if len(setLimits) > 0 {
		sort.Strings(setLimits)
		notes = append(notes, fmt.Sprintf("%s limit for %s %s", strings.Join(setLimits, ", "), what, c.Name))
	}
	return notes
}

// validatePod checks Container bounds on each container and Pod bounds on
// the pod's total.
func validatePod(lr *corev1.LimitRange, pod *corev1.Pod) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		kind := string(item.Type)
		switch item.Type {
		case corev1.LimitTypeContainer:
			for _, c := range allContainers(pod) {
				errs = append(errs, checkBounds(item, kind, c.Resources.Requests, c.Resources.Limits)...)
			}
		case corev1.LimitTypePod:
			errs = append(errs, checkBounds(item, kind, podTotal(pod, true), podTotal(pod, false))...)
		}
	}
	return utilerrors.NewAggregate(errs)
}

func allContainers(pod *corev1.Pod) []corev1.Container {
	out := make([]corev1.Container, 0, len(pod.Spec.Containers)+len(pod.Spec.InitContainers))
	out = append(out, pod.Spec.Containers...)
	return append(out, pod.Spec.InitContainers...)
}

func checkBounds(item corev1.LimitRangeItem, kind string, requests, limits corev1.ResourceList) []error {
	var errs []error
	for _, k := range sortedNames(item.Min) {
		if err := minConstraint(kind, string(k), item.Min[k], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range sortedNames(item.Max) {
		if err := maxConstraint(kind, string(k), item.Max[k], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range sortedNames(item.MaxLimitRequestRatio) {
		if err := ratioConstraint(kind, string(k), item.MaxLimitRequestRatio[k], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// validatePVC checks PersistentVolumeClaim bounds on the PVC's requests
// (its limits are not user input for this check, as upstream).
func validatePVC(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		kind := string(item.Type)
		for _, k := range sortedNames(item.Min) {
			if err := minConstraint(kind, string(k), item.Min[k], pvc.Spec.Resources.Requests, corev1.ResourceList{}); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range sortedNames(item.Max) {
			if err := maxRequestConstraint(kind, string(k), item.Max[k], pvc.Spec.Resources.Requests); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// sortedNames orders the checks (upstream iterates a map; kapi reports in
// name order so that messages are stable).
func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// values compares in milli-units when nothing overflows, else in units.
func values(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(kind, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, e := values(req, lim, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, kind, enforced.String())
	case r < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, kind, enforced.String(), req.String())
	case hasLim && l < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, kind, enforced.String(), lim.String())
	}
	return nil
}

func maxRequestConstraint(kind, name string, enforced resource.Quantity, requests corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	r, _, e := values(req, resource.Quantity{}, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, kind, enforced.String())
	case r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, kind, enforced.String(), req.String())
	}
	return nil
}

func maxConstraint(kind, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, e := values(req, lim, enforced)
	switch {
	case !hasLim:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, kind, enforced.String())
	case l > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, kind, enforced.String(), lim.String())
	case hasReq && r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, kind, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(kind, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, _ := values(req, lim, enforced)
	if !hasReq || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, kind, enforced.String())
	}
	if !hasLim || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, kind, enforced.String())
	}
	observed := float64(l) / float64(r)
	shown := observed
	maxRatio := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed *= 1000
		maxRatio = float64(enforced.MilliValue())
	}
	if observed > maxRatio {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, kind, enforced.String(), shown)
	}
	return nil
}

// podTotal is what the pod needs in all (requests, or limits): the sum of
// its containers and sidecars (restartable init containers), at least the
// largest regular init container plus the sidecars started before it, as
// upstream's podRequests/podLimits in the plugin (no pod overhead).
func podTotal(pod *corev1.Pod, requests bool) corev1.ResourceList {
	of := func(c corev1.Container) corev1.ResourceList {
		if requests {
			return c.Resources.Requests
		}
		return c.Resources.Limits
	}
	total := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		addTo(total, of(c))
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addTo(sidecars, of(c))
			addTo(total, of(c))
			continue
		}
		need := corev1.ResourceList{}
		addTo(need, sidecars)
		addTo(need, of(c))
		maxInto(initMax, need)
	}
	maxInto(total, initMax)
	return total
}

func addTo(dst, src corev1.ResourceList) {
	for k, v := range src {
		if cur, ok := dst[k]; ok {
			cur.Add(v)
			dst[k] = cur
		} else {
			dst[k] = v.DeepCopy()
		}
	}
}

func maxInto(dst, src corev1.ResourceList) {
	for k, v := range src {
		if cur, ok := dst[k]; !ok || v.Cmp(cur) > 0 {
			dst[k] = v.DeepCopy()
		}
	}
}
