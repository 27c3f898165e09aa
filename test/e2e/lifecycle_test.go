package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// TestDryRun: every write with dryRun=All answers as the real one would and
// stores nothing.
func TestDryRun(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		cms := e.cs.CoreV1().ConfigMaps(ns)
		dry := []string{metav1.DryRunAll}
		orig, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}

		created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{DryRun: dry})
		if err != nil {
			t.Fatalf("dry-run create: %v", err)
		}
		if created.Name != "dry" || created.UID == "" || created.CreationTimestamp.Time.IsZero() {
			t.Errorf("dry-run create returned %+v, want name, uid and creationTimestamp set", created.ObjectMeta)
		}
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Data: map[string]string{"bad key": "v"}}, metav1.CreateOptions{DryRun: dry}); !apierrors.IsInvalid(err) {
			t.Errorf("dry-run create of an invalid object: got %v, want Invalid", err)
		}
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{DryRun: dry}); !apierrors.IsAlreadyExists(err) {
			t.Errorf("dry-run create of an existing name: got %v, want AlreadyExists", err)
		}

		upd := orig.DeepCopy()
		upd.Data["k"] = "changed"
		if got, err := cms.Update(ctx, upd, metav1.UpdateOptions{DryRun: dry}); err != nil || got.Data["k"] != "changed" {
			t.Errorf("dry-run update: got %v, %v; want data k=changed", got, err)
		}
		if got, err := cms.Patch(ctx, "kept", types.MergePatchType, []byte(`{"data":{"p":"1"}}`), metav1.PatchOptions{DryRun: dry}); err != nil || got.Data["p"] != "1" {
			t.Errorf("dry-run patch: got %v, %v; want data p=1", got, err)
		}
		if err := cms.Delete(ctx, "kept", metav1.DeleteOptions{DryRun: dry}); err != nil {
			t.Errorf("dry-run delete: %v", err)
		}
		if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{DryRun: dry}, metav1.ListOptions{}); err != nil {
			t.Errorf("dry-run deletecollection: %v", err)
		}

		list, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 {
			t.Fatalf("after dry runs: got %d configmaps, want only kept", len(list.Items))
		}
		got := list.Items[0]
		if got.Name != "kept" || got.ResourceVersion != orig.ResourceVersion || fmt.Sprint(got.Data) != "map[k:v]" {
			t.Errorf("after dry runs: got %s rv %s data %v, want kept unchanged at rv %s", got.Name, got.ResourceVersion, got.Data, orig.ResourceVersion)
		}

		r := e.raw(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps?dryRun=Bogus", []byte(`{"metadata":{"name":"x"}}`))
		if r.code != http.StatusUnprocessableEntity {
			t.Fatalf("dryRun=Bogus: got %d %s, want 422", r.code, r.body)
		}
		const want = `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported values: "All"`
		if s := decodeStatus(t, r.body); s.Message != want {
			t.Errorf("dryRun=Bogus: got %q, want %q", s.Message, want)
		}
	})
}

func TestGenerateName(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		seen := map[string]bool{}
		nameRE := regexp.MustCompile(`^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
		for range 5 {
			cm, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create with generateName: %v", err)
			}
			if !nameRE.MatchString(cm.Name) || cm.GenerateName != "gen-" {
				t.Errorf("got name %q generateName %q, want gen- and 5 random characters", cm.Name, cm.GenerateName)
			}
			if seen[cm.Name] {
				t.Errorf("name %s generated twice", cm.Name)
			}
			seen[cm.Name] = true
		}
		// A name wins over generateName.
		cm, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "named", GenerateName: "gen-"}}, metav1.CreateOptions{})
		if err != nil || cm.Name != "named" {
			t.Errorf("create with name and generateName: got %v, %v; want name named", cm, err)
		}
		// Neither: 422 with kube's message.
		_, err = e.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("create without a name: got %v, want Invalid", err)
		}
		const want = `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`
		if err.Error() != want {
			t.Errorf("got %q, want %q", err.Error(), want)
		}
	})
}

// TestFinalizers: deleting an object with finalizers marks it
// (deletionTimestamp, deletionGracePeriodSeconds 0) and keeps it until an
// update removes the last finalizer.
func TestFinalizers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		cms := e.cs.CoreV1().ConfigMaps(ns)
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "f", Finalizers: []string{"example.com/keep"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()

		// The DELETE answers 200 with the marked object, not a Status.
		r := e.raw(t, http.MethodDelete, "/api/v1/namespaces/"+ns+"/configmaps/f", nil)
		if r.code != http.StatusOK {
			t.Fatalf("delete: got %d %s, want 200", r.code, r.body)
		}
		var marked corev1.ConfigMap
		if err := json.Unmarshal(r.body, &marked); err != nil || marked.Kind != "ConfigMap" {
			t.Fatalf("delete returned %s (%v), want the ConfigMap", r.body, err)
		}
		if marked.DeletionTimestamp == nil || marked.DeletionGracePeriodSeconds == nil || *marked.DeletionGracePeriodSeconds != 0 {
			t.Errorf("delete returned deletionTimestamp %v gracePeriod %v, want set and 0", marked.DeletionTimestamp, marked.DeletionGracePeriodSeconds)
		}
		expectEvent(t, w, watch.Modified, "f")

		got, err := cms.Get(ctx, "f", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get after delete: %v (want the object kept by its finalizer)", err)
		}
		if got.DeletionTimestamp == nil {
			t.Errorf("get after delete: no deletionTimestamp")
		}
		// A second delete changes nothing.
		if err := cms.Delete(ctx, "f", metav1.DeleteOptions{}); err != nil {
			t.Errorf("second delete: %v", err)
		}
		// While deleting, data may change but no finalizer may be added.
		got.Finalizers = append(got.Finalizers, "example.com/other")
		if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("adding a finalizer while deleting: got %v, want Invalid", err)
		} else if want := `ConfigMap "f" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/other"}`; err.Error() != want {
			t.Errorf("got %q, want %q", err.Error(), want)
		}

		got, err = cms.Get(ctx, "f", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Finalizers = nil
		if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("remove the finalizer: %v", err)
		}
		ev := nextEvent(t, w)
		if ev.Type == watch.Modified { // the update, then the deletion
			ev = nextEvent(t, w)
		}
		if ev.Type != watch.Deleted {
			t.Fatalf("got %s, want DELETED once the finalizer is gone", ev.Type)
		}
		if _, err := cms.Get(ctx, "f", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after the finalizer went: got %v, want NotFound", err)
		}
	})
}

// TestNamespaceLifecycle: a namespace is Active with the kubernetes
// finalizer; deleting it makes it Terminating, refuses new content with
// kube's 403, deletes its content, and removes it once the content is gone.
func TestNamespaceLifecycle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		t.Parallel()
		ctx := context.Background()
		nss := e.cs.CoreV1().Namespaces()
		name := e.newNamespace(t)
		ns, err := nss.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ns.Status.Phase != corev1.NamespaceActive || fmt.Sprint(ns.Spec.Finalizers) != "[kubernetes]" {
			t.Errorf("new namespace: phase %q finalizers %v, want Active [kubernetes]", ns.Status.Phase, ns.Spec.Finalizers)
		}
		if ns.Labels[corev1.LabelMetadataName] != name {
			t.Errorf("new namespace labels %v, want %s=%s", ns.Labels, corev1.LabelMetadataName, name)
		}
		for i := range 3 {
			if _, err := e.cs.CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.cs.CoreV1().Secrets(name).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// One object held by a finalizer keeps the namespace terminating.
		if _, err := e.cs.CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}

		if err := nss.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete namespace: %v", err)
		}
		ns, err = nss.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get terminating namespace: %v", err)
		}
		if ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
			t.Errorf("deleted namespace: phase %q deletionTimestamp %v, want Terminating and set", ns.Status.Phase, ns.DeletionTimestamp)
		}

		_, err = e.cs.CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
		want := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "late",
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", name)).ErrStatus
		want.Details.Causes = append(want.Details.Causes, metav1.StatusCause{
			Type: corev1.NamespaceTerminatingCause, Message: fmt.Sprintf("namespace %s is being terminated", name), Field: "metadata.namespace",
		})
		var status apierrors.APIStatus
		if !apierrors.IsForbidden(err) {
			t.Fatalf("create in a terminating namespace: got %v, want 403 Forbidden", err)
		}
		status = err.(apierrors.APIStatus)
		got := status.Status()
		got.TypeMeta = metav1.TypeMeta{}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Status differs from kube-apiserver's (-want +got):\n%s", diff)
		}

		began := time.Now()
		eventually(t, 15*time.Second, "content deleted", func() error {
			cms, err := e.cs.CoreV1().ConfigMaps(name).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			secrets, err := e.cs.CoreV1().Secrets(name).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(cms.Items) != 1 || cms.Items[0].Name != "held" || len(secrets.Items) != 0 {
				return fmt.Errorf("%d configmaps and %d secrets left, want only held", len(cms.Items), len(secrets.Items))
			}
			return nil
		})
		t.Logf("content deleted after %v", time.Since(began))
		held, err := e.cs.CoreV1().ConfigMaps(name).Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if held.DeletionTimestamp == nil {
			t.Errorf("held configmap has no deletionTimestamp")
		}
		if _, err := nss.Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace with content left: got %v, want it still there", err)
		}
		held.Finalizers = nil
		if _, err := e.cs.CoreV1().ConfigMaps(name).Update(ctx, held, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("release held: %v", err)
		}
		began = time.Now()
		defer func() { t.Logf("namespace gone after %v", time.Since(began)) }()
		eventually(t, 15*time.Second, "namespace gone", func() error {
			_, err := nss.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("get namespace: %v", err)
		})
	})
}

// TestSystemNamespaces: the four system namespaces exist and three of them
// cannot be deleted; kube-node-lease can.
func TestSystemNamespaces(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			ns, err := e.cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("get %s: %v", name, err)
				continue
			}
			if ns.Status.Phase != corev1.NamespaceActive {
				t.Errorf("%s: phase %q, want Active", name, ns.Status.Phase)
			}
		}
		for _, name := range []string{"default", "kube-system", "kube-public"} {
			err := e.cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
			if !apierrors.IsForbidden(err) || err.Error() != fmt.Sprintf(`namespaces "%s" is forbidden: this namespace may not be deleted`, name) {
				t.Errorf("delete %s: got %v, want Forbidden: this namespace may not be deleted", name, err)
			}
		}
		if err := e.cs.CoreV1().Namespaces().Delete(ctx, "kube-node-lease", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Errorf("dry-run delete kube-node-lease: got %v, want allowed", err)
		}
	})
}
