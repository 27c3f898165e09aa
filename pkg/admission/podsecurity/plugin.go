package podsecurity

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
)

// PluginName is the plugin's name in --enable-admission-plugins.
const PluginName = "PodSecurity"

// Reader reads objects of one resource (namespaces: namespace is "").
type Reader interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
	List(ctx context.Context, namespace string) (runtime.Object, error)
}

// Limits of the check of existing pods on a namespace label change, as
// upstream's namespaceMaxPodsToCheck and namespacePodCheckTimeout.
const (
	namespaceMaxPodsToCheck  = 3000
	namespacePodCheckTimeout = time.Second
)

// Plugin is the PodSecurity validating admission plugin.
type Plugin struct {
	cfg        config
	namespaces Reader
	pods       Reader
	// podCheckTimeout bounds the check of existing pods
	// (namespacePodCheckTimeout; tests raise it).
	podCheckTimeout time.Duration
	metrics         *Metrics
}

// SetMetrics makes the plugin record upstream's pod_security_* metrics
// in m.
func (p *Plugin) SetMetrics(m *Metrics) { p.metrics = m }

// New builds the plugin from its configuration (the PodSecurityConfiguration
// JSON of --admission-control-config-file; nil: defaults). pods may be nil:
// then namespace label changes are not checked against existing pods.
func New(configJSON []byte, namespaces, pods Reader) (*Plugin, error) {
	if namespaces == nil {
		return nil, errNoNamespaces
	}
	c, err := parseConfig(configJSON)
	if err != nil {
		return nil, err
	}
	return &Plugin{cfg: c, namespaces: namespaces, pods: pods, podCheckTimeout: namespacePodCheckTimeout}, nil
}

// Name is PluginName.
func (p *Plugin) Name() string { return PluginName }

// Handles creates and updates.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

var (
	podsResource       = schema.GroupResource{Resource: "pods"}
	namespacesResource = schema.GroupResource{Resource: "namespaces"}
)

// workloads are the resources whose pod templates are checked (warn and
// audit only), as upstream's DefaultPodSpecResources.
var workloads = []schema.GroupResource{
	{Resource: "replicationcontrollers"},
	{Resource: "podtemplates"},
	{Group: "apps", Resource: "replicasets"},
	{Group: "apps", Resource: "deployments"},
	{Group: "apps", Resource: "statefulsets"},
	{Group: "apps", Resource: "daemonsets"},
	{Group: "batch", Resource: "jobs"},
	{Group: "batch", Resource: "cronjobs"},
}

// Validate checks a.
// ReadsObjects implements admission.ObjectReader: only namespaces, pods
// and the workloads with pod templates are checked.
func (p *Plugin) ReadsObjects(a admission.Attributes) bool {
	gr := a.Resource.GroupResource()
	return gr == namespacesResource || gr == podsResource || slices.Contains(workloads, gr)
}

func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	gr := a.Resource.GroupResource()
	switch {
	case gr == namespacesResource:
		if a.Subresource != "" {
			return nil
		}
		return p.validateNamespace(ctx, a)
	case gr == podsResource:
		return p.validatePod(ctx, a)
	case slices.Contains(workloads, gr):
		if a.Subresource != "" {
			return nil
		}
		return p.validateWorkload(ctx, a)
	}
	return nil
}

// policyFor reads the policy of namespace ns, with the errors of its
// labels.
func (p *Plugin) policyFor(ctx context.Context, ns string) (Policy, field.ErrorList, error) {
	obj, err := p.namespaces.Get(ctx, "", ns)
	if err != nil {
		return Policy{}, nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return Policy{}, nil, err
	}
	pol, errs := policyFromLabels(m.GetLabels(), p.cfg.defaults)
	return pol, errs, nil
}

func (p *Plugin) exemptNamespace(ns string) bool {
	return ns != "" && slices.Contains(p.cfg.namespaces, ns)
}

func (p *Plugin) exemptUser(a admission.Attributes) bool {
	return a.User != nil && a.User.Name != "" && slices.Contains(p.cfg.usernames, a.User.Name)
}

func (p *Plugin) exemptRuntimeClass(name *string) bool {
	return name != nil && *name != "" && slices.Contains(p.cfg.runtimeClasses, *name)
}

// ignoredPodSubresources are not checked; any other pod subresource
// (ephemeralcontainers, resize, ...) carries a pod and is (upstream's
// ignoredPodSubresources).
var ignoredPodSubresources = []string{"exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"}

// validatePod is upstream's ValidatePod: exempt namespaces and users first,
// then the namespace's policy (nothing to do when every mode is
// privileged), then, on update, only changes that matter.
func (p *Plugin) validatePod(ctx context.Context, a admission.Attributes) error {
	if slices.Contains(ignoredPodSubresources, a.Subresource) {
		return nil
	}
	if p.exemptNamespace(a.Namespace) {
		audit.AddAnnotation(ctx, AnnotationExempt, "namespace")
		p.metrics.exemption(&a)
		return nil
	}
	if p.exemptUser(a) {
		audit.AddAnnotation(ctx, AnnotationExempt, "user")
		p.metrics.exemption(&a)
		return nil
	}
	pol, polErrs, err := p.policyFor(ctx, a.Namespace)
	if err != nil {
		// Upstream: errorResponse(err, NewInternalError(fmt.Errorf("failed
		// to lookup namespace %q", ns))), whose "error" audit annotation is
		// the status message, ": ", and the cause.
		msg := fmt.Sprintf("failed to lookup namespace %q", a.Namespace)
		audit.AddAnnotation(ctx, AnnotationError, fmt.Sprintf("Internal error occurred: %s: %v", msg, err))
		p.metrics.error(true, &a)
		return apierrors.NewInternalError(errors.New(msg))
	}
	if len(polErrs) == 0 && pol.Enforce.Level == LevelPrivileged && pol.Warn.Level == LevelPrivileged && pol.Audit.Level == LevelPrivileged {
		// Upstream's sharedAllowedPrivilegedResponse: the enforced policy
		// is named privileged:latest whatever version the labels give.
		audit.AddAnnotation(ctx, AnnotationEnforcePolicy, string(LevelPrivileged)+":latest")
		p.metrics.evaluation(decisionAllow, pol.Enforce, modeEnforce, &a)
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		p.metrics.error(true, &a)
		return apierrors.NewBadRequest("failed to decode pod")
	}
	if a.Operation == admission.Update {
		old, ok := a.OldObject.(*corev1.Pod)
		if !ok {
			p.metrics.error(true, &a)
			return apierrors.NewBadRequest("failed to decode old pod")
		}
		if !significantPodUpdate(pod, old) {
			return nil
		}
	}
	return p.evaluate(ctx, a, pol, polErrs, &pod.ObjectMeta, &pod.Spec, true)
}

// evaluate is upstream's EvaluatePod: the enforce level only for pods
// (enforce), audit and warn for pods and workloads.
func (p *Plugin) evaluate(ctx context.Context, a admission.Attributes, pol Policy, polErrs field.ErrorList, m *metav1.ObjectMeta, spec *corev1.PodSpec, enforce bool) error {
	if p.exemptRuntimeClass(spec.RuntimeClassName) {
		audit.AddAnnotation(ctx, AnnotationExempt, "runtimeClass")
		p.metrics.exemption(&a)
		return nil
	}
	if len(polErrs) > 0 {
		audit.AddAnnotation(ctx, AnnotationError, fmt.Sprintf("Failed to parse policy: %v", polErrs.ToAggregate()))
		p.metrics.error(false, &a)
	}
	var denied error
	if enforce {
		audit.AddAnnotation(ctx, AnnotationEnforcePolicy, pol.Enforce.String())
		if rs := evaluate(pol.Enforce, m, spec); len(rs) > 0 {
			denied = admission.NewForbidden(a, fmt.Errorf("violates PodSecurity %q: %s", pol.Enforce.String(), message(rs)))
			p.metrics.evaluation(decisionDeny, pol.Enforce, modeEnforce, &a)
		} else {
			p.metrics.evaluation(decisionAllow, pol.Enforce, modeEnforce, &a)
		}
	}
	if rs := evaluate(pol.Audit, m, spec); len(rs) > 0 {
		audit.AddAnnotation(ctx, AnnotationAuditViolations, fmt.Sprintf("would violate PodSecurity %q: %s", pol.Audit.String(), message(rs)))
		p.metrics.evaluation(decisionDeny, pol.Audit, modeAudit, &a)
	}
	// As upstream, a request that is denied gets no warning.
	if denied == nil {
		if rs := evaluate(pol.Warn, m, spec); len(rs) > 0 {
			warning.AddWarning(ctx, fmt.Sprintf("would violate PodSecurity %q: %s", pol.Warn.String(), message(rs)))
			p.metrics.evaluation(decisionDeny, pol.Warn, modeWarn, &a)
		}
	}
	return denied
}

// significantPodUpdate is upstream's isSignificantPodUpdate: an update is
// checked when it changes a container's seccomp annotation, the number of
// containers, a container's image, or adds or changes an ephemeral
// container (the other fields the checks read are immutable).
func significantPodUpdate(pod, old *corev1.Pod) bool {
	// The pod-level seccomp annotation is not looked at: upstream dropped
	// that test (only the per-container annotation remains).
	if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
		return true
	}
	changed := func(c, oc *corev1.Container) bool {
		key := corev1.SeccompContainerAnnotationKeyPrefix + c.Name
		return c.Image != oc.Image || pod.Annotations[key] != old.Annotations[key]
	}
	for i := range pod.Spec.Containers {
		if changed(&pod.Spec.Containers[i], &old.Spec.Containers[i]) {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		if changed(&pod.Spec.InitContainers[i], &old.Spec.InitContainers[i]) {
			return true
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		c := (*corev1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		var oc *corev1.Container
		for j := range old.Spec.EphemeralContainers {
			if old.Spec.EphemeralContainers[j].Name == c.Name {
				oc = (*corev1.Container)(&old.Spec.EphemeralContainers[j].EphemeralContainerCommon)
				break
			}
		}
		if oc == nil || changed(c, oc) {
			return true
		}
	}
	return false
}

// templateOf returns the pod template of a workload object.
func templateOf(obj runtime.Object) (*metav1.ObjectMeta, *corev1.PodSpec) {
	var t *corev1.PodTemplateSpec
	switch o := obj.(type) {
	case *corev1.ReplicationController:
		t = o.Spec.Template
	case *corev1.PodTemplate:
		t = &o.Template
	case *appsv1.ReplicaSet:
		t = &o.Spec.Template
	case *appsv1.Deployment:
		t = &o.Spec.Template
	case *appsv1.StatefulSet:
		t = &o.Spec.Template
	case *appsv1.DaemonSet:
		t = &o.Spec.Template
	case *batchv1.Job:
		t = &o.Spec.Template
	case *batchv1.CronJob:
		t = &o.Spec.JobTemplate.Spec.Template
	}
	if t == nil {
		return nil, nil
	}
	return &t.ObjectMeta, &t.Spec
}

// validateWorkload is upstream's ValidatePodController: warn and audit
// only; a namespace that cannot be read does not deny the write.
func (p *Plugin) validateWorkload(ctx context.Context, a admission.Attributes) error {
	if p.exemptNamespace(a.Namespace) {
		audit.AddAnnotation(ctx, AnnotationExempt, "namespace")
		p.metrics.exemption(&a)
		return nil
	}
	if p.exemptUser(a) {
		audit.AddAnnotation(ctx, AnnotationExempt, "user")
		p.metrics.exemption(&a)
		return nil
	}
	pol, polErrs, err := p.policyFor(ctx, a.Namespace)
	if err != nil {
		audit.AddAnnotation(ctx, AnnotationError, fmt.Sprintf("failed to lookup namespace %q: %v", a.Namespace, err))
		p.metrics.error(true, &a)
		return nil
	}
	if len(polErrs) == 0 && pol.Warn.Level == LevelPrivileged && pol.Audit.Level == LevelPrivileged {
		return nil
	}
	m, spec := templateOf(a.Object)
	if spec == nil {
		return nil
	}
	return p.evaluate(ctx, a, pol, polErrs, m, spec, false)
}

// validateNamespace is upstream's ValidateNamespace: label values must be
// valid (on update, only when their errors changed), and a stricter
// enforce level is checked against the namespace's pods, as warnings.
func (p *Plugin) validateNamespace(ctx context.Context, a admission.Attributes) error {
	ns, ok := a.Object.(*corev1.Namespace)
	if !ok {
		return apierrors.NewBadRequest("failed to decode namespace")
	}
	pol, errs := policyFromLabels(ns.Labels, p.cfg.defaults)
	invalid := func() error { return apierrors.NewInvalid(schema.GroupKind{Kind: "Namespace"}, ns.Name, errs) }
	if a.Operation == admission.Create {
		if len(errs) > 0 {
			return invalid()
		}
		p.warnExemptNamespace(ctx, ns, pol)
		return nil
	}
	old, ok := a.OldObject.(*corev1.Namespace)
	if !ok {
		return apierrors.NewBadRequest("failed to decode old namespace")
	}
	oldPol, oldErrs := policyFromLabels(old.Labels, p.cfg.defaults)
	if len(errs) > 0 && (len(oldErrs) == 0 || !reflect.DeepEqual(errs, oldErrs)) {
		return invalid()
	}
	switch {
	case pol.Enforce == oldPol.Enforce,
		pol.Enforce.Level == LevelPrivileged,
		pol.Enforce.Version == oldPol.Enforce.Version && pol.Enforce.Level.rank() <= oldPol.Enforce.Level.rank():
		return nil
	case p.exemptNamespace(ns.Name):
		// Upstream's ValidateNamespace answers an exempt namespace with its
		// plain allowed response (no exemption audit annotation), plus the
		// exempt-namespace warning.
		p.warnExemptNamespace(ctx, ns, pol)
		return nil
	}
	for _, w := range p.existingPodWarnings(ctx, ns.Name, pol.Enforce) {
		warning.AddWarning(ctx, w)
	}
	return nil
}

// warnExemptNamespace is upstream's exemptNamespaceWarning: labelling an
// exempt namespace with a policy that is neither fully privileged nor the
// configured default warns that it will be ignored, naming each
// non-privileged mode whose level or version label is set
// ("namespace \"kube-system\" is exempt from Pod Security, and the policy
// (enforce=baseline:latest) will be ignored").
func (p *Plugin) warnExemptNamespace(ctx context.Context, ns *corev1.Namespace, pol Policy) {
	if !p.exemptNamespace(ns.Name) || pol.fullyPrivileged() || pol.equivalent(p.cfg.defaults) {
		return
	}
	var modes []string
	for _, m := range []struct {
		name                   string
		lv                     LevelVersion
		levelLabel, versionLbl string
	}{
		{"enforce", pol.Enforce, EnforceLevelLabel, EnforceVersionLabel},
		{"audit", pol.Audit, AuditLevelLabel, AuditVersionLabel},
		{"warn", pol.Warn, WarnLevelLabel, WarnVersionLabel},
	} {
		_, hasLevel := ns.Labels[m.levelLabel]
		_, hasVersion := ns.Labels[m.versionLbl]
		if m.lv.Level != LevelPrivileged && (hasLevel || hasVersion) {
			modes = append(modes, m.name+"="+m.lv.String())
		}
	}
	warning.AddWarning(ctx, fmt.Sprintf("namespace %q is exempt from Pod Security, and the policy (%s) will be ignored", ns.Name, strings.Join(modes, ", ")))
}

// existingPodWarnings is upstream's EvaluatePodsInNamespace: the
// namespace's pods (those of exempt runtime classes left out, one pod per
// controller first) are checked against a new enforce level, at most
// namespaceMaxPodsToCheck of them within namespacePodCheckTimeout (or half
// the request's remaining time); pods failing the same checks share one
// warning naming the lexically first of them.
func (p *Plugin) existingPodWarnings(ctx context.Context, ns string, lv LevelVersion) []string {
	if p.pods == nil {
		return nil
	}
	timeout := p.podCheckTimeout
	if d, ok := ctx.Deadline(); ok && time.Until(d)/2 < timeout {
		timeout = time.Until(d) / 2
	}
	// The list is read with the request's context: upstream lists from an
	// informer cache, which the deadline never cuts short.
	obj, err := p.pods.List(ctx, ns)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	list, ok := obj.(*corev1.PodList)
	if err != nil || !ok {
		return []string{"failed to list pods while checking new PodSecurity enforce level"}
	}
	pods := p.prioritizePods(list.Items)
	total := len(pods)
	if len(pods) > namespaceMaxPodsToCheck {
		pods = pods[:namespaceMaxPodsToCheck]
	}
	checked := len(pods)
	type count struct {
		first string
		n     int
	}
	var keys []string
	counts := map[string]count{}
	for i, pod := range pods {
		if rs := evaluate(lv, &pod.ObjectMeta, &pod.Spec); len(rs) > 0 {
			key := reasons(rs)
			c, seen := counts[key]
			if !seen {
				c.first = pod.Name
				keys = append(keys, key)
			} else if pod.Name < c.first {
				c.first = pod.Name
			}
			c.n++
			counts[key] = c
		}
		if ctx.Err() != nil {
			checked = i + 1
			break
		}
	}
	var out []string
	if checked < total {
		out = append(out, fmt.Sprintf("new PodSecurity enforce level only checked against the first %d of %d existing pods", checked, total))
	}
	if len(keys) > 0 {
		out = append(out, fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", ns, lv.String()))
	}
	podWarnings := make([]string, 0, len(keys))
	for _, key := range keys {
		c := counts[key]
		switch c.n {
		case 1:
			podWarnings = append(podWarnings, fmt.Sprintf("%s: %s", c.first, key))
		case 2:
			podWarnings = append(podWarnings, fmt.Sprintf("%s (and 1 other pod): %s", c.first, key))
		default:
			podWarnings = append(podWarnings, fmt.Sprintf("%s (and %d other pods): %s", c.first, c.n-1, key))
		}
	}
	sort.Strings(podWarnings)
	return append(out, podWarnings...)
}

// prioritizePods drops pods of exempt runtime classes and puts the first
// pod of each controller before the other replicas (upstream's
// prioritizePods).
func (p *Plugin) prioritizePods(items []corev1.Pod) []*corev1.Pod {
	var first, dups []*corev1.Pod
	seen := map[types.UID]bool{}
	for i := range items {
		pod := &items[i]
		if p.exemptRuntimeClass(pod.Spec.RuntimeClassName) {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case ref == nil:
			first = append(first, pod)
		case seen[ref.UID]:
			dups = append(dups, pod)
		default:
			seen[ref.UID] = true
			first = append(first, pod)
		}
	}
	return append(first, dups...)
}

// errNoNamespaces is returned by New without a namespaces Reader.
var errNoNamespaces = errors.New("podsecurity: a namespaces reader is required")
