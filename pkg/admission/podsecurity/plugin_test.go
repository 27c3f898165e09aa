package podsecurity

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
)

// namespaces is a Reader over fixed namespaces.
type namespaces map[string]map[string]string

func (n namespaces) Get(_ context.Context, _, name string) (runtime.Object, error) {
	labels, ok := n[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, nil
}

func (n namespaces) List(context.Context, string) (runtime.Object, error) {
	return nil, fmt.Errorf("not supported")
}

// podLister is a Reader listing fixed pods.
type podLister []corev1.Pod

func (p podLister) Get(context.Context, string, string) (runtime.Object, error) {
	return nil, fmt.Errorf("not supported")
}

func (p podLister) List(_ context.Context, ns string) (runtime.Object, error) {
	out := &corev1.PodList{}
	for _, pod := range p {
		if pod.Namespace == ns {
			out.Items = append(out.Items, pod)
		}
	}
	return out, nil
}

// recorder collects warnings and audit annotations of one request.
type recorder struct {
	mu       sync.Mutex
	warnings []string
	events   []*audit.Event
}

func (r *recorder) AddWarning(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, text)
}
func (r *recorder) ProcessEvents(evs ...*audit.Event) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, evs...)
	return true
}
func (r *recorder) Run(<-chan struct{}) error { return nil }
func (r *recorder) Shutdown()                 {}

// run validates a and returns the error, warnings and audit annotations.
func run(t *testing.T, p *Plugin, a admission.Attributes) (error, []string, map[string]string) {
	t.Helper()
	r := &recorder{}
	ctx := warning.WithRecorder(audit.WithContext(context.Background()), r)
	ac := audit.FromContext(ctx)
	ac.Begin(&audit.Event{}, audit.Policy{Level: audit.LevelMetadata}, r, nil)
	err := p.Validate(ctx, a)
	ac.Emit(audit.StageResponseComplete)
	var ann map[string]string
	if len(r.events) == 1 {
		ann = r.events[0].Annotations
	}
	return err, r.warnings, ann
}

var (
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

func podCreate(ns string, pod *corev1.Pod) admission.Attributes {
	pod.Namespace = ns
	return admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: ns, Name: pod.Name,
		Object: pod, User: &user.Info{Name: "alice"}}
}

func barePod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
}

func mustNew(t *testing.T, cfg string, ns namespaces, pods podLister) *Plugin {
	t.Helper()
	var data []byte
	if cfg != "" {
		data = []byte(cfg)
	}
	p, err := New(data, ns, pods)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Expected texts: upstream admission.go EvaluatePod ("violates PodSecurity
// %q: %s", "would violate PodSecurity %q: %s") and the check messages.
const restrictedBare = `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
	`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
	`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
	`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

func TestEnforceWarnAudit(t *testing.T) {
	p := mustNew(t, "", namespaces{
		"enf":  {EnforceLevelLabel: "restricted"},
		"warn": {WarnLevelLabel: "restricted", AuditLevelLabel: "baseline", AuditVersionLabel: "v1.30"},
		"all":  {EnforceLevelLabel: "baseline", WarnLevelLabel: "restricted", AuditLevelLabel: "restricted"},
		"none": nil,
	}, nil)

	err, warns, ann := run(t, p, podCreate("enf", barePod("p")))
	if !apierrors.IsForbidden(err) {
		t.Fatalf("enforce: got %v, want Forbidden", err)
	}
	if want := `pods "p" is forbidden: violates PodSecurity "restricted:latest": ` + restrictedBare; err.Error() != want {
		t.Errorf("enforce message\n got %s\nwant %s", err, want)
	}
	if len(warns) != 0 || ann[AnnotationEnforcePolicy] != "restricted:latest" {
		t.Errorf("enforce: warnings %v annotations %v", warns, ann)
	}

	priv := barePod("p")
	priv.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr(true)}
	err, warns, ann = run(t, p, podCreate("warn", priv))
	if err != nil {
		t.Fatal(err)
	}
	wantWarn := `would violate PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), ` + restrictedBare
	if !slices.Equal(warns, []string{wantWarn}) {
		t.Errorf("warn\n got %q\nwant %q", warns, wantWarn)
	}
	if got, want := ann[AnnotationAuditViolations], `would violate PodSecurity "baseline:v1.30": privileged (container "c" must not set securityContext.privileged=true)`; got != want {
		t.Errorf("audit-violations %q, want %q", got, want)
	}
	if ann[AnnotationEnforcePolicy] != "privileged:latest" {
		t.Errorf("enforce-policy %q", ann[AnnotationEnforcePolicy])
	}

	// Denied: audit still annotated, no warning (upstream adds none to a
	// rejected request).
	err, warns, ann = run(t, p, podCreate("all", priv.DeepCopy()))
	if !apierrors.IsForbidden(err) || len(warns) != 0 || !strings.HasPrefix(ann[AnnotationAuditViolations], `would violate PodSecurity "restricted:latest": privileged`) {
		t.Errorf("all modes: %v %v %v", err, warns, ann)
	}
	// A baseline-clean pod in "all": allowed, warned, audited.
	err, warns, _ = run(t, p, podCreate("all", barePod("q")))
	if err != nil || len(warns) != 1 {
		t.Errorf("baseline pod in all: %v %v", err, warns)
	}

	// All privileged: no evaluation, only the enforce-policy annotation
	// (upstream's sharedAllowedPrivilegedResponse).
	err, warns, ann = run(t, p, podCreate("none", priv.DeepCopy()))
	if err != nil || len(warns) != 0 || len(ann) != 1 || ann[AnnotationEnforcePolicy] != "privileged:latest" {
		t.Errorf("privileged namespace: %v %v %v", err, warns, ann)
	}

	// A namespace that cannot be read: fail closed, as upstream.
	// Upstream's errorResponse: the "error" audit annotation is the status
	// message, ": " and the cause.
	if err, _, ann := run(t, p, podCreate("missing", barePod("p"))); !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), `failed to lookup namespace "missing"`) ||
		!strings.HasPrefix(ann[AnnotationError], `Internal error occurred: failed to lookup namespace "missing": `) {
		t.Errorf("missing namespace: %v %v", err, ann)
	}
}

func TestPodUpdatesAndSubresources(t *testing.T) {
	p := mustNew(t, "", namespaces{"enf": {EnforceLevelLabel: "baseline"}}, nil)
	old := barePod("p")
	old.Namespace = "enf"
	old.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr(true)}
	upd := func(pod *corev1.Pod, sub string) admission.Attributes {
		return admission.Attributes{Operation: admission.Update, Resource: podsGVR, Subresource: sub, Namespace: "enf", Name: "p", Object: pod, OldObject: old}
	}
	// A label change of an existing violating pod is not significant.
	relabel := old.DeepCopy()
	relabel.Labels = map[string]string{"a": "b"}
	if err, _, _ := run(t, p, upd(relabel, "")); err != nil {
		t.Errorf("label update: %v", err)
	}
	// As upstream's isSignificantPodUpdate (admission.go), a change of the
	// pod-level seccomp annotation alone is not; of a container's one is.
	podSeccomp := old.DeepCopy()
	podSeccomp.Annotations = map[string]string{corev1.SeccompPodAnnotationKey: "unconfined"}
	if err, _, _ := run(t, p, upd(podSeccomp, "")); err != nil {
		t.Errorf("pod seccomp annotation update: %v", err)
	}
	ctrSeccomp := old.DeepCopy()
	ctrSeccomp.Annotations = map[string]string{corev1.SeccompContainerAnnotationKeyPrefix + "c": "unconfined"}
	if err, _, _ := run(t, p, upd(ctrSeccomp, "")); !apierrors.IsForbidden(err) {
		t.Errorf("container seccomp annotation update: %v", err)
	}
	// An image change is.
	image := old.DeepCopy()
	image.Spec.Containers[0].Image = "j"
	if err, _, _ := run(t, p, upd(image, "")); !apierrors.IsForbidden(err) {
		t.Errorf("image update: %v", err)
	}
	// Status is ignored; ephemeralcontainers checked.
	if err, _, _ := run(t, p, upd(image, "status")); err != nil {
		t.Errorf("status: %v", err)
	}
	clean := barePod("p")
	clean.Namespace = "enf"
	eph := clean.DeepCopy()
	eph.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "dbg", Image: "i", SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)}}}}
	a := upd(eph, "ephemeralcontainers")
	a.OldObject = clean
	err, _, _ := run(t, p, a)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `privileged (container "dbg" must not set securityContext.privileged=true)`) {
		t.Errorf("ephemeralcontainers: %v", err)
	}
}

func TestWorkloads(t *testing.T) {
	p := mustNew(t, "", namespaces{"enf": {EnforceLevelLabel: "restricted"}, "warn": {WarnLevelLabel: "restricted", AuditLevelLabel: "restricted"}}, nil)
	dep := func(ns string) admission.Attributes {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: ns}, Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: barePod("").Spec}}}
		return admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: ns, Name: "d", Object: d}
	}
	// Enforce alone does not apply to workloads.
	if err, warns, ann := run(t, p, dep("enf")); err != nil || len(warns) != 0 || len(ann) != 0 {
		t.Errorf("enforce on deployment: %v %v %v", err, warns, ann)
	}
	err, warns, ann := run(t, p, dep("warn"))
	if err != nil || !slices.Equal(warns, []string{`would violate PodSecurity "restricted:latest": ` + restrictedBare}) {
		t.Errorf("warn on deployment: %v %q", err, warns)
	}
	if ann[AnnotationAuditViolations] == "" || ann[AnnotationEnforcePolicy] != "" {
		t.Errorf("deployment annotations: %v", ann)
	}
}

func TestExemptionsAndConfig(t *testing.T) {
	cfg := `{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration",
"defaults":{"enforce":"baseline","warn":"restricted","warn-version":"v1.21"},
"exemptions":{"usernames":["admin"],"runtimeClasses":["kata"],"namespaces":["kube-system"]}}`
	p := mustNew(t, cfg, namespaces{"default": nil, "kube-system": nil, "labeled": {EnforceLevelLabel: "privileged"}}, nil)
	priv := func() *corev1.Pod {
		pod := barePod("p")
		pod.Spec.HostNetwork = true
		return pod
	}
	// Defaults apply to unlabeled namespaces.
	err, _, ann := run(t, p, podCreate("default", priv()))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`) || ann[AnnotationEnforcePolicy] != "baseline:latest" {
		t.Errorf("default policy: %v %v", err, ann)
	}
	// Labels override defaults; warn keeps the default v1.21 (3 checks
	// there, no capabilities_restricted), plus host namespaces.
	err, warns, _ := run(t, p, podCreate("labeled", priv()))
	if err != nil || len(warns) != 1 || !strings.HasPrefix(warns[0], `would violate PodSecurity "restricted:v1.21": host namespaces (hostNetwork=true), allowPrivilegeEscalation != false`) ||
		strings.Contains(warns[0], "unrestricted capabilities") {
		t.Errorf("labeled: %v %q", err, warns)
	}
	for _, tt := range []struct {
		name, why string
		a         admission.Attributes
	}{
		{"namespace", "namespace", podCreate("kube-system", priv())},
		{"user", "user", func() admission.Attributes {
			a := podCreate("default", priv())
			a.User = &user.Info{Name: "admin"}
			return a
		}()},
		{"runtimeClass", "runtimeClass", func() admission.Attributes {
			pod := priv()
			pod.Spec.RuntimeClassName = ptr("kata")
			return podCreate("default", pod)
		}()},
	} {
		err, warns, ann := run(t, p, tt.a)
		if err != nil || len(warns) != 0 || ann[AnnotationExempt] != tt.why {
			t.Errorf("%s exemption: %v %v %v", tt.name, err, warns, ann)
		}
	}
	// Upstream's ValidatePodSecurityConfiguration errors, in its order
	// (defaults enforce, warn, audit; exemptions namespaces, runtimeClasses,
	// usernames).
	_, err = New([]byte(`{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration",`+
		`"defaults":{"audit":"strict","warn-version":"1.2"},"exemptions":{"usernames":["a","","a"],"namespaces":["Bad_NS","ok","ok"],"runtimeClasses":["x..y"]}}`), namespaces{}, nil)
	wantErr := `invalid PodSecurityConfiguration: [defaults.warn-version: Invalid value: "1.2": must be "latest" or "v1.x", ` +
		`defaults.audit: Invalid value: "strict": must be one of privileged, baseline, restricted, ` +
		`exemptions.namespaces[0]: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), ` +
		`exemptions.namespaces[2]: Duplicate value: "ok", ` +
		`exemptions.runtimeClasses[0]: Invalid value: "x..y": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), ` +
		`exemptions.usernames[1]: Invalid value: "": username must not be empty, ` +
		`exemptions.usernames[2]: Duplicate value: "a"]`
	if err == nil || err.Error() != wantErr {
		t.Errorf("config errors\n got %v\nwant %s", err, wantErr)
	}
	for _, bad := range []string{
		`{"apiVersion":"v1","kind":"PodSecurityConfiguration"}`,
		`{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration","defaults":{"enforce":"strict"}}`,
		`{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration","defaults":{"audit-version":"1.2"}}`,
		`{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration","exemptions":{"usernames":["a","a"]}}`,
		`{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration","unknown":1}`,
	} {
		if _, err := New([]byte(bad), namespaces{}, nil); err == nil {
			t.Errorf("config %s accepted", bad)
		}
	}
}

func TestNamespaceLabels(t *testing.T) {
	mk := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	owner := func(uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: types.UID(uid), Controller: ptr(true)}}
	}
	var pods podLister
	for i, name := range []string{"web-c", "web-a", "web-b"} {
		pod := barePod(name)
		pod.Namespace = "ns"
		pod.OwnerReferences = owner("rs1")
		_ = i
		pods = append(pods, *pod)
	}
	hostNet := barePod("hn")
	hostNet.Namespace = "ns"
	hostNet.Spec.HostNetwork = true
	pods = append(pods, *hostNet)
	other := barePod("elsewhere")
	other.Namespace = "other"
	pods = append(pods, *other)
	p := mustNew(t, `{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration","exemptions":{"namespaces":["exempt"]}}`, namespaces{}, pods)

	// Invalid values: 422 with upstream's field errors.
	err, _, _ := run(t, p, admission.Attributes{Operation: admission.Create, Resource: nsGVR, Name: "ns", Object: mk("ns", map[string]string{EnforceLevelLabel: "strict", AuditVersionLabel: "v1"})})
	want := `Namespace "ns" is invalid: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, ` +
		`metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "v1": must be "latest" or "v1.x"]`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("invalid labels\n got %v\nwant %s", err, want)
	}
	// Unchanged invalid labels do not block other updates.
	bad := mk("ns", map[string]string{EnforceLevelLabel: "strict"})
	if err, _, _ := run(t, p, admission.Attributes{Operation: admission.Update, Resource: nsGVR, Name: "ns", Object: bad, OldObject: bad.DeepCopy()}); err != nil {
		t.Errorf("unchanged invalid labels: %v", err)
	}

	update := func(name string, oldLabels, labels map[string]string) []string {
		t.Helper()
		err, warns, _ := run(t, p, admission.Attributes{Operation: admission.Update, Resource: nsGVR, Name: name, Object: mk(name, labels), OldObject: mk(name, oldLabels)})
		if err != nil {
			t.Fatal(err)
		}
		return warns
	}
	// Format: upstream EvaluatePodsInNamespace and decoratePodWarnings.
	got := update("ns", nil, map[string]string{EnforceLevelLabel: "restricted"})
	wantWarns := []string{
		`existing pods in namespace "ns" violate the new PodSecurity enforce level "restricted:latest"`,
		`hn: host namespaces, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile`,
		`web-a (and 2 other pods): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile`,
	}
	if !slices.Equal(got, wantWarns) {
		t.Errorf("warnings\n got %q\nwant %q", got, wantWarns)
	}
	if got := update("ns", nil, map[string]string{EnforceLevelLabel: "baseline"}); !slices.Equal(got, []string{
		`existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"`, `hn: host namespaces`}) {
		t.Errorf("baseline warnings %q", got)
	}
	// No check when relaxing, when unchanged, when privileged, when exempt.
	for _, c := range []struct{ old, new map[string]string }{
		{map[string]string{EnforceLevelLabel: "restricted"}, map[string]string{EnforceLevelLabel: "baseline"}},
		{map[string]string{EnforceLevelLabel: "restricted"}, map[string]string{EnforceLevelLabel: "restricted", "x": "y"}},
		{map[string]string{EnforceLevelLabel: "baseline"}, map[string]string{EnforceLevelLabel: "privileged"}},
	} {
		if got := update("ns", c.old, c.new); len(got) != 0 {
			t.Errorf("%v -> %v: %q", c.old, c.new, got)
		}
	}
	// An exempt namespace's pods are not checked; a non-default,
	// non-privileged policy gets upstream's exemptNamespaceWarning (text:
	// staging/src/k8s.io/pod-security-admission/admission/admission.go,
	// "namespace %q is exempt from Pod Security, and the policy (%s) will be
	// ignored"), on update and on create, naming only the modes whose labels
	// are set and whose level is not privileged.
	exemptWarn := `namespace "exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored`
	if got := update("exempt", nil, map[string]string{EnforceLevelLabel: "restricted"}); !slices.Equal(got, []string{exemptWarn}) {
		t.Errorf("exempt namespace: %q", got)
	}
	err, warns, ann := run(t, p, admission.Attributes{Operation: admission.Create, Resource: nsGVR, Name: "exempt", Object: mk("exempt", map[string]string{
		EnforceLevelLabel: "restricted", AuditLevelLabel: "privileged", WarnVersionLabel: "v1.30", WarnLevelLabel: "baseline",
	})})
	if want := `namespace "exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest, warn=baseline:v1.30) will be ignored`; err != nil || !slices.Equal(warns, []string{want}) || ann[AnnotationExempt] != "" {
		t.Errorf("exempt namespace create: %v %q %v", err, warns, ann)
	}
	// Fully privileged, or equal to the defaults (privileged ignores its
	// version): no warning.
	for _, labels := range []map[string]string{
		{EnforceLevelLabel: "privileged", EnforceVersionLabel: "v1.20"},
		{"x": "y"},
	} {
		if err, warns, _ := run(t, p, admission.Attributes{Operation: admission.Create, Resource: nsGVR, Name: "exempt", Object: mk("exempt", labels)}); err != nil || len(warns) != 0 {
			t.Errorf("exempt namespace %v: %v %q", labels, err, warns)
		}
	}
	if err, warns, _ := run(t, p, admission.Attributes{Operation: admission.Create, Resource: nsGVR, Name: "ns2", Object: mk("ns2", map[string]string{EnforceLevelLabel: "restricted"})}); err != nil || len(warns) != 0 {
		t.Errorf("not exempt namespace create: %v %q", err, warns)
	}
	// A version change at the same level re-checks.
	if got := update("ns", map[string]string{EnforceLevelLabel: "baseline", EnforceVersionLabel: "v1.0"}, map[string]string{EnforceLevelLabel: "baseline"}); len(got) != 2 {
		t.Errorf("version change: %q", got)
	}
}

// TestExistingPodsLimit checks upstream's cap of 3000 pods per check
// (defaultNamespaceMaxPodsToCheck) and its message, one pod per
// controller first, and the exempt runtime classes left out.
func TestExistingPodsLimit(t *testing.T) {
	var pods podLister
	for i := range namespaceMaxPodsToCheck + 2 {
		pod := barePod(fmt.Sprintf("rep-%05d", i))
		pod.Namespace = "ns"
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs1", Controller: ptr(true)}}
		pods = append(pods, *pod)
	}
	// Listed last, checked before the replicas (its own controller).
	hn := barePod("zz-hostnet")
	hn.Namespace = "ns"
	hn.Spec.HostNetwork = true
	kata := barePod("kata")
	kata.Namespace = "ns"
	kata.Spec.HostPID = true
	kata.Spec.RuntimeClassName = ptr("kata")
	pods = append(pods, *hn, *kata)
	p := mustNew(t, `{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration","exemptions":{"runtimeClasses":["kata"]}}`, namespaces{}, pods)
	p.podCheckTimeout = time.Minute // the count limit, not the time limit, is tested
	got := p.existingPodWarnings(context.Background(), "ns", LevelVersion{LevelRestricted, LatestVersion()})
	want := []string{
		fmt.Sprintf("new PodSecurity enforce level only checked against the first %d of %d existing pods", namespaceMaxPodsToCheck, namespaceMaxPodsToCheck+3),
		`existing pods in namespace "ns" violate the new PodSecurity enforce level "restricted:latest"`,
		fmt.Sprintf("rep-00000 (and %d other pods): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile", namespaceMaxPodsToCheck-2),
		"zz-hostnet: host namespaces, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	// Out of time (upstream: the pod being checked when the deadline
	// passes is the last).
	p.podCheckTimeout = time.Nanosecond
	got = p.existingPodWarnings(context.Background(), "ns", LevelVersion{LevelRestricted, LatestVersion()})
	if len(got) != 3 || got[0] != fmt.Sprintf("new PodSecurity enforce level only checked against the first 1 of %d existing pods", namespaceMaxPodsToCheck+3) {
		t.Errorf("timeout: %q", got)
	}
}

// TestFullyPrivilegedAnnotated: a pod in a namespace privileged in every
// mode is named privileged:latest in the audit event, whatever version the
// labels give, as kube-apiserver v1.37.2 records a pod created in a new
// namespace (seen in its audit log: "pod-security.kubernetes.io/enforce-policy":
// "privileged:latest").
func TestFullyPrivilegedAnnotated(t *testing.T) {
	p := mustNew(t, "", namespaces{"plain": {}, "pinned": {EnforceLevelLabel: "privileged", EnforceVersionLabel: "v1.30"}}, nil)
	for _, ns := range []string{"plain", "pinned"} {
		err, warns, ann := run(t, p, podCreate(ns, barePod("")))
		if err != nil || len(warns) != 0 {
			t.Fatalf("%s: %v %v", ns, err, warns)
		}
		if got := ann[AnnotationEnforcePolicy]; got != "privileged:latest" {
			t.Errorf("%s: enforce-policy %q, want privileged:latest", ns, got)
		}
	}
}
