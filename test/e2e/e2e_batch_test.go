package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestKubectlBatchAutoscalingPolicy drives the batch, autoscaling and
// policy flows with kubectl 1.27 and 1.33 on both backends: create job,
// create cronjob, create job --from=cronjob, get -o wide (the server's
// tables), explain, HPAs applied in v1 and v2, PDBs, and a validation
// error as kubectl shows it.
func TestKubectlBatchAutoscalingPolicy(t *testing.T) {
	binaries := kubectlPair(t)
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, bin := range binaries {
			t.Run(filepath.Base(bin), func(t *testing.T) {
				t.Parallel()
				runBatchFlows(t, e, newKC(t, e, bin))
			})
		}
	})
}

// tableLine finds the line of out matching re (anchored), or fails.
func tableLine(t *testing.T, out, re string) {
	t.Helper()
	if !regexp.MustCompile(`(?m)^` + re + `$`).MatchString(out) {
		t.Errorf("no line matches %q in:\n%s", re, out)
	}
}

func runBatchFlows(t *testing.T, e *env, k *kc) {
	ctx := context.Background()
	ns := e.newNamespace(t)

	// Jobs.
	out := k.ok(t, "-n", ns, "create", "job", "pi", "--image=perl:5.34.0", "--", "perl", "-e", "print 1")
	if !strings.Contains(out, "job.batch/pi created") {
		t.Errorf("create job: %s", out)
	}
	job, err := e.cs.BatchV1().Jobs(ns).Get(ctx, "pi", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid := string(job.UID)
	if *job.Spec.BackoffLimit != 6 || *job.Spec.Completions != 1 || job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] != uid ||
		job.Spec.Template.Labels["job-name"] != "pi" || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("stored job %+v", job.Spec)
	}
	out = k.ok(t, "-n", ns, "get", "jobs", "-o", "wide")
	tableLine(t, out, `NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR`)
	tableLine(t, out, `pi\s+Running\s+0/1\s+\d+s\s+pi\s+perl:5\.34\.0\s+batch\.kubernetes\.io/controller-uid=`+uid)

	// CronJobs, and a Job made from one (client side, with an owner
	// reference and the instantiate annotation).
	out = k.ok(t, "-n", ns, "create", "cronjob", "hello", "--image=busybox:1.28", "--schedule=*/5 * * * *", "--", "date")
	if !strings.Contains(out, "cronjob.batch/hello created") {
		t.Errorf("create cronjob: %s", out)
	}
	out = k.ok(t, "-n", ns, "get", "cronjobs", "-o", "wide")
	tableLine(t, out, `NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR`)
	tableLine(t, out, `hello\s+\*/5 \* \* \* \*\s+<none>\s+False\s+0\s+<none>\s+\d+s\s+hello\s+busybox:1\.28\s+<none>`)
	out = k.ok(t, "-n", ns, "create", "job", "manual", "--from=cronjob/hello")
	if !strings.Contains(out, "job.batch/manual created") {
		t.Errorf("create job --from: %s", out)
	}
	manual, err := e.cs.BatchV1().Jobs(ns).Get(ctx, "manual", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(manual.OwnerReferences) != 1 || manual.OwnerReferences[0].Kind != "CronJob" || manual.Annotations["cronjob.kubernetes.io/instantiate"] != "manual" {
		t.Errorf("job from cronjob: owners %+v annotations %v", manual.OwnerReferences, manual.Annotations)
	}
	if c := manual.Spec.Template.Spec.Containers; len(c) != 1 || c[0].Image != "busybox:1.28" {
		t.Errorf("job from cronjob: containers %+v", c)
	}

	// Validation errors as kubectl prints them.
	r := k.run(t, "", nil, "-n", ns, "create", "cronjob", "bad", "--image=busybox", "--schedule=61 * * * *")
	if r.code == 0 || !strings.Contains(r.stderr, `spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61`) {
		t.Errorf("bad schedule: %s", r)
	}

	// HPAs: one stored object, applied through v1 and read through both.
	k.apply(t, ns, `apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  maxReplicas: 5
  targetCPUUtilizationPercentage: 50
`)
	k.apply(t, ns, `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: api
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: api
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: memory
      target:
        type: AverageValue
        averageValue: 500Mi
`)
	out = k.ok(t, "-n", ns, "get", "hpa")
	tableLine(t, out, `NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE`)
	tableLine(t, out, `web\s+Deployment/web\s+cpu: <unknown>/50%\s+1\s+5\s+0\s+\d+s`)
	tableLine(t, out, `api\s+Deployment/api\s+memory: <unknown>/500Mi\s+2\s+10\s+0\s+\d+s`)
	v2, err := e.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v2.Spec.Metrics) != 1 || v2.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 50 {
		t.Errorf("v1 autoscaler read as v2: %+v", v2.Spec.Metrics)
	}
	v1, err := e.cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v1.Spec.TargetCPUUtilizationPercentage != nil || !strings.Contains(v1.Annotations["autoscaling.alpha.kubernetes.io/metrics"], `"name":"memory"`) {
		t.Errorf("v2 autoscaler read as v1: %+v %v", v1.Spec, v1.Annotations)
	}

	// PDBs.
	out = k.ok(t, "-n", ns, "create", "pdb", "zk", "--selector=app=zk", "--min-available=2")
	if !strings.Contains(out, "poddisruptionbudget.policy/zk created") {
		t.Errorf("create pdb: %s", out)
	}
	out = k.ok(t, "-n", ns, "get", "pdb")
	tableLine(t, out, `NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE`)
	tableLine(t, out, `zk\s+2\s+N/A\s+0\s+\d+s`)
	r = k.run(t, "", nil, "-n", ns, "create", "pdb", "both", "--selector=app=zk", "--min-available=150%")
	if r.code == 0 || !strings.Contains(r.stderr, `spec.minAvailable: Invalid value: "150%": must not be greater than 100%`) {
		t.Errorf("pdb over 100%%: %s", r)
	}

	// explain (OpenAPI) knows every resource.
	for q, want := range map[string]string{
		"job.spec.backoffLimit":          "backoffLimit",
		"cronjob.spec.schedule":          "schedule",
		"hpa.spec.metrics":               "metrics",
		"poddisruptionbudget.spec":       "minAvailable",
		"cronjob.spec.jobTemplate.spec":  "podFailurePolicy",
		"horizontalpodautoscaler.status": "currentReplicas",
	} {
		if out := k.ok(t, "explain", q); !strings.Contains(out, want) {
			t.Errorf("explain %s lacks %q:\n%s", q, want, out)
		}
	}

	// Deleting through kubectl (which sends propagationPolicy) works.
	k.ok(t, "-n", ns, "delete", "job", "pi", "manual")
	k.ok(t, "-n", ns, "delete", "cronjob", "hello")
	k.ok(t, "-n", ns, "delete", "hpa", "web", "api")
	k.ok(t, "-n", ns, "delete", "pdb", "zk")
}

// TestBatchDefaultingOnEveryWritePath: upstream defaults whenever an
// object is decoded, so a Job written without the defaulted fields by
// create, update, every patch type and server-side apply is stored with
// them (a defaulted-away field would otherwise make the immutable template
// "change").
func TestBatchDefaultingOnEveryWritePath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		jobs := e.cs.BatchV1().Jobs(ns)
		check := func(path string, j *batchv1.Job) {
			t.Helper()
			c := j.Spec.Template.Spec.Containers[0]
			if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 6 || j.Spec.CompletionMode == nil || j.Spec.PodReplacementPolicy == nil ||
				j.Spec.Template.Spec.DNSPolicy != corev1.DNSClusterFirst || c.ImagePullPolicy != corev1.PullIfNotPresent || c.TerminationMessagePath == "" {
				t.Errorf("%s: not defaulted: %+v", path, j.Spec)
			}
		}
		created, err := jobs.Create(ctx, &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "d"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox:1.28"}},
			}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check("create", created)

		// Update (PUT) without the defaulted fields.
		put := created.DeepCopy()
		put.Spec.BackoffLimit = nil
		put.Spec.Template.Spec.DNSPolicy = ""
		put.Spec.Template.Spec.Containers[0].ImagePullPolicy = ""
		put.Labels["touched"] = "put"
		updated, err := jobs.Update(ctx, put, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		check("update", updated)

		patches := []struct {
			name string
			pt   types.PatchType
			data string
		}{
			{"json patch", types.JSONPatchType, `[{"op":"remove","path":"/spec/backoffLimit"},{"op":"remove","path":"/spec/template/spec/dnsPolicy"}]`},
			{"merge patch", types.MergePatchType, `{"spec":{"backoffLimit":null,"template":{"spec":{"dnsPolicy":null}}}}`},
			{"strategic merge patch", types.StrategicMergePatchType, `{"spec":{"backoffLimit":null,"template":{"spec":{"dnsPolicy":null,"containers":[{"name":"c","imagePullPolicy":null}]}}}}`},
		}
		for _, p := range patches {
			patched, err := jobs.Patch(ctx, "d", p.pt, []byte(p.data), metav1.PatchOptions{})
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			check(p.name, patched)
		}

		// Server-side apply of a new Job and of a change to it.
		applied, err := jobs.Apply(ctx, batchv1ac.Job("applied", ns).WithSpec(batchv1ac.JobSpec().
			WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
				WithRestartPolicy(corev1.RestartPolicyOnFailure).
				WithContainers(corev1ac.Container().WithName("c").WithImage("busybox:1.28"))))),
			metav1.ApplyOptions{FieldManager: "e2e"})
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		check("apply", applied)
		applied, err = jobs.Apply(ctx, batchv1ac.Job("applied", ns).WithSpec(batchv1ac.JobSpec().WithParallelism(2).
			WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
				WithRestartPolicy(corev1.RestartPolicyOnFailure).
				WithContainers(corev1ac.Container().WithName("c").WithImage("busybox:1.28"))))),
			metav1.ApplyOptions{FieldManager: "e2e"})
		if err != nil {
			t.Fatalf("apply again: %v", err)
		}
		check("apply again", applied)
		if *applied.Spec.Parallelism != 2 || applied.Generation != 2 {
			t.Errorf("apply again: parallelism %d generation %d", *applied.Spec.Parallelism, applied.Generation)
		}

		// Storage reads default too.
		got, err := jobs.Get(ctx, "d", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check("get", got)
	})
}

// TestHPAManagedFieldsAcrossVersions: fields owned through autoscaling/v1
// stay owned when the object is written through v2 (the scheme converts
// between the versions, as kube does through its internal version), and
// server-side apply through v1 conflicts with a v2 owner.
func TestHPAManagedFieldsAcrossVersions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		body := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},` +
			`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":4,"targetCPUUtilizationPercentage":60}}`
		_, err := e.cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Patch(ctx, "web", types.ApplyPatchType, []byte(body),
			metav1.PatchOptions{FieldManager: "v1-applier"})
		if err != nil {
			t.Fatalf("apply through v1: %v", err)
		}
		hpa, err := e.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hpa.Spec.MinReplicas = ptr.To[int32](2)
		hpa, err = e.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Update(ctx, hpa, metav1.UpdateOptions{FieldManager: "v2-updater"})
		if err != nil {
			t.Fatal(err)
		}
		managers := map[string]string{}
		for _, m := range hpa.ManagedFields {
			managers[m.Manager] = m.APIVersion
		}
		if managers["v1-applier"] != "autoscaling/v1" || managers["v2-updater"] != "autoscaling/v2" {
			t.Errorf("managed fields %v, want the v1 applier's kept beside the v2 updater's", managers)
		}
		// The v1 applier still owns maxReplicas: a v2 apply changing it
		// conflicts.
		conflict := `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},` +
			`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":9}}`
		_, err = e.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Patch(ctx, "web", types.ApplyPatchType, []byte(conflict),
			metav1.PatchOptions{FieldManager: "other"})
		if err == nil || !strings.Contains(err.Error(), "v1-applier") {
			t.Errorf("conflicting v2 apply: %v, want a conflict with v1-applier", err)
		}
		// A v1 status write does not touch the spec.
		st := &autoscalingv1.HorizontalPodAutoscaler{}
		got, err := e.cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.DeepCopyInto(st)
		st.Status.CurrentReplicas, st.Status.DesiredReplicas = 3, 3
		st.Spec.MaxReplicas = 100
		if _, err := e.cs.AutoscalingV1().HorizontalPodAutoscalers(ns).UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		final, err := e.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if final.Status.CurrentReplicas != 3 || final.Spec.MaxReplicas != 4 {
			t.Errorf("after a v1 status update: max %d current %d", final.Spec.MaxReplicas, final.Status.CurrentReplicas)
		}
	})
}

// TestBatchAutoscalingPolicyProtobuf: the resources round-trip over
// protobuf (client-go's protobuf content type), including the autoscaling
// v1 view, and their watches deliver protobuf events.
func TestBatchAutoscalingPolicyProtobuf(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		cfg := e.config()
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
		cs := kubernetes.NewForConfigOrDie(cfg)

		w, err := cs.BatchV1().CronJobs(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		cj, err := cs.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Name: "pb"},
			Spec: batchv1.CronJobSpec{Schedule: "@hourly", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			}}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cj.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent || *cj.Spec.SuccessfulJobsHistoryLimit != 3 {
			t.Errorf("cronjob over protobuf not defaulted: %+v", cj.Spec)
		}
		select {
		case ev := <-w.ResultChan():
			if got, ok := ev.Object.(*batchv1.CronJob); !ok || got.Name != "pb" {
				t.Errorf("watch event %s %T", ev.Type, ev.Object)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no watch event")
		}

		hpa, err := cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "pb"},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "pb"},
				MaxReplicas:    3,
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *hpa.Spec.MinReplicas != 1 || hpa.Spec.TargetCPUUtilizationPercentage == nil || *hpa.Spec.TargetCPUUtilizationPercentage != 80 {
			t.Errorf("v1 autoscaler over protobuf: %+v", hpa.Spec)
		}
		list, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
			t.Errorf("v2 list over protobuf: %+v", list.Items)
		}

		pdb, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "pb"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("10%"))},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pdb.Spec.MaxUnavailable.String() != "10%" {
			t.Errorf("pdb over protobuf: %+v", pdb.Spec)
		}
	})
}

// TestEvictionHonoursPodDisruptionBudgets evicts pods with client-go's
// EvictV1 (POST pods/<name>/eviction): a budget that allows no disruption
// answers 429 TooManyRequests as upstream and keeps the pod; one that
// allows one lets the pod go and records it; dry-run changes nothing.
func TestEvictionHonoursPodDisruptionBudgets(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		pods := e.cs.CoreV1().Pods(ns)
		running := func(name string) {
			t.Helper()
			p, err := pods.Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// Discovery lists the subresource as upstream: a policy/v1 Eviction.
		rl, err := e.cs.Discovery().ServerResourcesForGroupVersion("v1")
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rl.APIResources, func(r metav1.APIResource) bool { return r.Name == "pods/eviction" })
		if i < 0 || rl.APIResources[i].Group != "policy" || rl.APIResources[i].Version != "v1" || rl.APIResources[i].Kind != "Eviction" ||
			!slices.Equal(rl.APIResources[i].Verbs, []string{"create"}) {
			t.Errorf("discovery of pods/eviction: %+v", rl.APIResources)
		}
		running("a")
		running("b")
		pdbs := e.cs.PolicyV1().PodDisruptionBudgets(ns)
		pdb, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ptr.To(intstr.FromInt32(1)),
				Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setBudget := func(allowed int32) {
			t.Helper()
			cur, err := pdbs.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cur.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed, CurrentHealthy: 2, DesiredHealthy: 1, ExpectedPods: 2}
			if _, err := pdbs.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		evict := func(name string, dryRun bool) error {
			ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
			if dryRun {
				ev.DeleteOptions = &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
			}
			return pods.EvictV1(ctx, ev)
		}

		setBudget(0)
		err = evict("a", false)
		if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "Cannot evict pod as it would violate the pod's disruption budget.") {
			t.Fatalf("eviction against a spent budget: %v, want 429 TooManyRequests", err)
		}
		if _, err := pods.Get(ctx, "a", metav1.GetOptions{}); err != nil {
			t.Fatalf("the refused pod is gone: %v", err)
		}

		setBudget(1)
		if err := evict("a", true); err != nil {
			t.Fatalf("dry-run eviction: %v", err)
		}
		if _, err := pods.Get(ctx, "a", metav1.GetOptions{}); err != nil {
			t.Fatalf("a dry-run eviction deleted the pod: %v", err)
		}
		if err := evict("a", false); err != nil {
			t.Fatalf("eviction within the budget: %v", err)
		}
		// The pod was never scheduled: its deletion is immediate.
		if _, err := pods.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("evicted pod: %v, want NotFound", err)
		}
		got, err := pdbs.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got.Status.DisruptedPods["a"]; got.Status.DisruptionsAllowed != 0 || !ok {
			t.Errorf("budget after the eviction: %+v", got.Status)
		}
		if err := evict("b", false); !apierrors.IsTooManyRequests(err) {
			t.Errorf("second eviction: %v, want 429", err)
		}
		// A pending pod goes whatever the budget.
		if _, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "pending", Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := evict("pending", false); err != nil {
			t.Errorf("evicting a pending pod: %v", err)
		}
		if err := evict("missing", false); !apierrors.IsNotFound(err) {
			t.Errorf("evicting a missing pod: %v, want NotFound", err)
		}
		// A policy/v1beta1 Eviction body is accepted too (older kubectl
		// drain and clients send it; upstream's scheme still decodes it).
		if _, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "old-client", Labels: map[string]string{"app": "other"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods.EvictV1beta1(ctx, &policyv1beta1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "old-client", Namespace: ns}}); err != nil {
			t.Errorf("policy/v1beta1 eviction: %v", err)
		}
		if _, err := pods.Get(ctx, "old-client", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("pod evicted through policy/v1beta1: %v, want NotFound", err)
		}
		if err := pods.EvictV1beta1(ctx, &policyv1beta1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: ns}}); !apierrors.IsTooManyRequests(err) {
			t.Errorf("policy/v1beta1 eviction against a spent budget: %v, want 429", err)
		}
	})
}
