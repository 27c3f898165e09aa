package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// The garbage collector and the per-namespace defaults (issue 13 point 6)
// run on servers of their own, started with every controller on (the
// shared backends leave the root CA publisher off).

// forEachControllerBackend runs fn on a fresh server with default options,
// on the memory backend and on embedded etcd.
func forEachControllerBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	for _, b := range []struct {
		name string
		opts []kapitest.Option
	}{{"memory", nil}, {"etcd", []kapitest.Option{kapitest.WithEmbeddedEtcd()}}} {
		t.Run(b.name, func(t *testing.T) {
			srv := kapitest.Start(t, b.opts...)
			e := &env{backend: b.name, srv: srv}
			e.cs = kubernetes.NewForConfigOrDie(e.config())
			fn(t, e)
		})
	}
}

func TestNamespaceDefaults(t *testing.T) {
	kubectls := kubectls(t)
	forEachControllerBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		for i, kubectl := range kubectls {
			ns := fmt.Sprintf("defaults-%d-%d", time.Now().UnixNano()%1e6, i)
			if out, stderr, err := runKubectl(t, kubectl, e.srv.Kubeconfig, "create", "ns", ns); err != nil {
				t.Fatalf("%s create ns: %v: %s %s", kubectl, err, out, stderr)
			}
			created := time.Now()
			t.Cleanup(func() { _ = e.cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
			// Within a second of the namespace (an attempt started within
			// the second must succeed; kubectl itself takes a while).
			for _, args := range [][]string{{"get", "sa", "default", "-n", ns}, {"get", "cm", "kube-root-ca.crt", "-n", ns}} {
				for {
					started := time.Now()
					_, stderr, err := runKubectl(t, kubectl, e.srv.Kubeconfig, args...)
					if err == nil {
						break
					}
					if started.Sub(created) > time.Second {
						t.Fatalf("%s %s: not within a second of the namespace: %v: %s", kubectl, strings.Join(args, " "), err, stderr)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		}

		// The published CA is the one clients verify the server with (the
		// admin kubeconfig's), described as upstream describes it.
		ns := e.newNamespace(t)
		var cm *corev1.ConfigMap
		eventually(t, 5*time.Second, "kube-root-ca.crt", func() (err error) {
			cm, err = e.cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			return err
		})
		if got, want := cm.Data["ca.crt"], string(e.srv.Config.CAData); got != want || want == "" {
			t.Errorf("ca.crt: got %q, want the admin kubeconfig's CA %q", got, want)
		}
		// Upstream's description (pkg/controller/certificates/rootcacertpublisher/publisher.go).
		if got := cm.Annotations["kubernetes.io/description"]; !strings.HasPrefix(got, "Contains a CA bundle that can be used to verify the kube-apiserver") {
			t.Errorf("description annotation: got %q", got)
		}

		// Deleted: recreated. Changed: put back. (The service account is
		// made by another controller than the ConfigMap: wait for it too.)
		var sa *corev1.ServiceAccount
		eventually(t, 5*time.Second, "default service account", func() (err error) {
			sa, err = e.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			return err
		})
		if err := e.cs.CoreV1().ServiceAccounts(ns).Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, "default service account recreated", func() error {
			got, err := e.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			if err == nil && got.UID == sa.UID {
				return errors.New("still the deleted one")
			}
			return err
		})
		if err := e.cs.CoreV1().ConfigMaps(ns).Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, "kube-root-ca.crt recreated", func() error {
			got, err := e.cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			if err == nil && got.UID == cm.UID {
				return errors.New("still the deleted one")
			}
			return err
		})
		eventually(t, 5*time.Second, "kube-root-ca.crt edited", func() error {
			cur, err := e.cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Data = map[string]string{"ca.crt": "tampered"}
			_, err = e.cs.CoreV1().ConfigMaps(ns).Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		eventually(t, 5*time.Second, "kube-root-ca.crt put back", func() error {
			cur, err := e.cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cur.Data["ca.crt"] != string(e.srv.Config.CAData) {
				return fmt.Errorf("ca.crt is %q", cur.Data["ca.crt"])
			}
			return nil
		})
	})
}

// gcFixture creates owners and dependents in one namespace.
type gcFixture struct {
	t      *testing.T
	e      *env
	ns     string
	dyn    dynamic.Interface
	widget schema.GroupVersionResource // namespaced custom resource
	gadget schema.GroupVersionResource // cluster-scoped custom resource
}

// newGCFixture makes a namespace and two CRDs of the test's own (created
// after the collector started: it must find them).
func newGCFixture(t *testing.T, e *env) *gcFixture {
	t.Helper()
	f := &gcFixture{t: t, e: e, ns: e.newNamespace(t), dyn: dynamic.NewForConfigOrDie(e.config())}
	group := fmt.Sprintf("gc%d.e2e.kapi.dev", time.Now().UnixNano()%1e9)
	f.widget = f.crd(group, "Widget", apiextensionsv1.NamespaceScoped)
	f.gadget = f.crd(group, "Gadget", apiextensionsv1.ClusterScoped)
	return f
}

// with returns the fixture for the (sub)test t: failures end t.
func (f *gcFixture) with(t *testing.T) *gcFixture {
	c := *f
	c.t = t
	return &c
}

func (f *gcFixture) crd(group, kind string, scope apiextensionsv1.ResourceScope) schema.GroupVersionResource {
	f.t.Helper()
	ctx := context.Background()
	plural := strings.ToLower(kind) + "s"
	cs := apiextensionsclient.NewForConfigOrDie(f.e.config())
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
			Scope: scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}},
			}},
		},
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		f.t.Fatalf("create CRD: %v", err)
	}
	f.t.Cleanup(func() {
		_ = cs.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
	eventually(f.t, 20*time.Second, "CRD established", func() error {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return errors.New("not established")
	})
	return schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}
}

// owner is what dependents reference.
type owner struct {
	gvr       schema.GroupVersionResource
	namespace string
	ref       metav1.OwnerReference
}

func (f *gcFixture) customOwner(gvr schema.GroupVersionResource, kind, name string) owner {
	f.t.Helper()
	ns := f.ns
	client := f.dyn.Resource(gvr).Namespace(ns)
	if gvr == f.gadget {
		ns = ""
		client = f.dyn.Resource(gvr).Namespace("")
		f.t.Cleanup(func() { _ = client.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvr.GroupVersion().String(), "kind": kind, "metadata": map[string]any{"name": name}}}
	got, err := client.Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create %s %s: %v", kind, name, err)
	}
	return owner{gvr: gvr, namespace: ns, ref: metav1.OwnerReference{APIVersion: gvr.GroupVersion().String(), Kind: kind, Name: name, UID: got.GetUID()}}
}

// deploymentOwner creates a Deployment (which no controller acts on: it
// owns only the test's dependents).
func (f *gcFixture) deploymentOwner(name string) owner {
	f.t.Helper()
	labels := map[string]string{"app": name}
	got, err := f.e.cs.AppsV1().Deployments(f.ns).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.25"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create deployment %s: %v", name, err)
	}
	return owner{gvr: appsv1.SchemeGroupVersion.WithResource("deployments"), namespace: f.ns, ref: metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: got.UID}}
}

func (f *gcFixture) secretOwner(name string) owner {
	f.t.Helper()
	got, err := f.e.cs.CoreV1().Secrets(f.ns).Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create secret %s: %v", name, err)
	}
	return owner{gvr: corev1.SchemeGroupVersion.WithResource("secrets"), namespace: f.ns, ref: metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: name, UID: got.UID}}
}

// dependents creates n ConfigMaps labelled set=<set>, each owned by refs.
func (f *gcFixture) dependents(set string, n int, refs ...metav1.OwnerReference) {
	f.t.Helper()
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
					Name: fmt.Sprintf("%s-%d", set, i), Labels: map[string]string{"set": set}, OwnerReferences: refs,
				}}
				if _, err := f.e.cs.CoreV1().ConfigMaps(f.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		f.t.Fatalf("create dependents %s: %v", set, err)
	}
}

// count is the number of ConfigMaps of set.
func (f *gcFixture) list(set string) ([]corev1.ConfigMap, error) {
	l, err := f.e.cs.CoreV1().ConfigMaps(f.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "set=" + set})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func (f *gcFixture) waitGone(set string, timeout time.Duration) {
	f.t.Helper()
	eventually(f.t, timeout, "dependents of "+set+" collected", func() error {
		items, err := f.list(set)
		if err != nil {
			return err
		}
		if len(items) > 0 {
			return fmt.Errorf("%d left", len(items))
		}
		return nil
	})
}

func (f *gcFixture) get(o owner) (*unstructured.Unstructured, error) {
	return f.dyn.Resource(o.gvr).Namespace(o.namespace).Get(context.Background(), o.ref.Name, metav1.GetOptions{})
}

func (f *gcFixture) delete(o owner, opts metav1.DeleteOptions) {
	f.t.Helper()
	if err := f.dyn.Resource(o.gvr).Namespace(o.namespace).Delete(context.Background(), o.ref.Name, opts); err != nil {
		f.t.Fatalf("delete %s %s: %v", o.ref.Kind, o.ref.Name, err)
	}
}

func (f *gcFixture) waitOwnerGone(o owner, timeout time.Duration) {
	f.t.Helper()
	eventually(f.t, timeout, o.ref.Kind+" "+o.ref.Name+" gone", func() error {
		_, err := f.get(o)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return errors.New("still there")
	})
}

func policy(p metav1.DeletionPropagation) metav1.DeleteOptions {
	return metav1.DeleteOptions{PropagationPolicy: &p}
}

func blocking(r metav1.OwnerReference) metav1.OwnerReference {
	t := true
	r.BlockOwnerDeletion = &t
	return r
}

const dependentsPerOwner = 500

func TestGarbageCollection(t *testing.T) {
	forEachControllerBackend(t, func(t *testing.T, e *env) {
		f := newGCFixture(t, e)

		t.Run("background", func(t *testing.T) {
			f := f.with(t)
			for _, o := range []owner{f.customOwner(f.widget, "Widget", "bg-widget"), f.deploymentOwner("bg-deployment")} {
				set := "bg-" + strings.ToLower(o.ref.Kind)
				f.dependents(set, dependentsPerOwner, o.ref)
				f.delete(o, policy(metav1.DeletePropagationBackground))
				// The owner goes at once; its dependents after it.
				if _, err := f.get(o); !apierrors.IsNotFound(err) {
					t.Errorf("%s after a background delete: got %v, want NotFound", o.ref.Kind, err)
				}
				f.waitGone(set, 60*time.Second)
			}
		})

		t.Run("foreground", func(t *testing.T) {
			f := f.with(t)
			for _, o := range []owner{f.customOwner(f.widget, "Widget", "fg-widget"), f.deploymentOwner("fg-deployment")} {
				set := "fg-" + strings.ToLower(o.ref.Kind)
				f.dependents(set, dependentsPerOwner, blocking(o.ref))
				f.delete(o, policy(metav1.DeletePropagationForeground))
				got, err := f.get(o)
				if err != nil {
					t.Fatalf("%s right after a foreground delete: %v", o.ref.Kind, err)
				}
				if got.GetDeletionTimestamp() == nil || !slices.Contains(got.GetFinalizers(), metav1.FinalizerDeleteDependents) {
					t.Errorf("%s: deletionTimestamp %v finalizers %v, want it waiting with foregroundDeletion", o.ref.Kind, got.GetDeletionTimestamp(), got.GetFinalizers())
				}
				f.waitOwnerGone(o, 60*time.Second)
				// The owner went only after its blocking dependents.
				if items, err := f.list(set); err != nil || len(items) != 0 {
					t.Errorf("%s gone with %d dependents left (%v)", o.ref.Kind, len(items), err)
				}
			}
		})

		t.Run("orphan", func(t *testing.T) {
			f := f.with(t)
			widget, deployment, legacy, query := f.customOwner(f.widget, "Widget", "or-widget"), f.deploymentOwner("or-deployment"), f.secretOwner("or-legacy"), f.secretOwner("or-query")
			f.dependents("or-widget", dependentsPerOwner, widget.ref)
			f.dependents("or-deployment", dependentsPerOwner, deployment.ref)
			f.dependents("or-legacy", 20, legacy.ref)
			f.dependents("or-query", 20, query.ref)
			// The collector orphans the dependents its graph holds; one
			// its ConfigMap informer has not delivered yet is later found
			// with its owner gone and collected (as upstream's). Wait
			// until the graph holds them all: a probe dependent created
			// after them, whose owner is deleted in the background, is
			// collected only once that informer delivered it, and so
			// every ConfigMap created before it (seen under CI's load,
			// session 28: 19 of or-query's 20 left).
			probe := f.secretOwner("or-probe")
			f.dependents("or-probe", 1, probe.ref)
			f.delete(probe, policy(metav1.DeletePropagationBackground))
			f.waitGone("or-probe", 60*time.Second)
			f.delete(widget, policy(metav1.DeletePropagationOrphan))
			f.delete(deployment, policy(metav1.DeletePropagationOrphan))
			// The deprecated field, in a raw DELETE body.
			res := e.raw(t, "DELETE", "/api/v1/namespaces/"+f.ns+"/secrets/or-legacy", []byte(`{"kind":"DeleteOptions","apiVersion":"v1","orphanDependents":true}`))
			if res.code != 200 {
				t.Fatalf("DELETE with orphanDependents: %d %s", res.code, res.body)
			}
			// The policy as a query parameter, without a body.
			res = e.raw(t, "DELETE", "/api/v1/namespaces/"+f.ns+"/secrets/or-query?propagationPolicy=Orphan", nil)
			if res.code != 200 {
				t.Fatalf("DELETE ?propagationPolicy=Orphan: %d %s", res.code, res.body)
			}
			for _, o := range []owner{widget, deployment, legacy, query} {
				f.waitOwnerGone(o, 60*time.Second)
			}
			for set, n := range map[string]int{"or-widget": dependentsPerOwner, "or-deployment": dependentsPerOwner, "or-legacy": 20, "or-query": 20} {
				items, err := f.list(set)
				if err != nil {
					t.Fatal(err)
				}
				if len(items) != n {
					t.Errorf("%s: %d dependents left, want all %d orphaned", set, len(items), n)
				}
				for _, cm := range items {
					if len(cm.OwnerReferences) != 0 {
						t.Errorf("%s/%s still has owner references %v", set, cm.Name, cm.OwnerReferences)
						break
					}
				}
			}
		})

		t.Run("cluster-scoped owner", func(t *testing.T) {
			f := f.with(t)
			gadget := f.customOwner(f.gadget, "Gadget", fmt.Sprintf("gadget-%s", f.ns))
			f.dependents("cl", 50, blocking(gadget.ref))
			// A cluster-scoped dependent too.
			child := f.customOwner(f.gadget, "Gadget", fmt.Sprintf("child-%s", f.ns))
			u, err := f.get(child)
			if err != nil {
				t.Fatal(err)
			}
			u.SetOwnerReferences([]metav1.OwnerReference{gadget.ref})
			if _, err := f.dyn.Resource(f.gadget).Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			f.delete(gadget, policy(metav1.DeletePropagationForeground))
			f.waitOwnerGone(gadget, 60*time.Second)
			f.waitGone("cl", 10*time.Second)
			f.waitOwnerGone(child, 30*time.Second)
		})

		t.Run("owner UID mismatch", func(t *testing.T) {
			f := f.with(t)
			o := f.secretOwner("uid-owner")
			f.dependents("uid-good", 3, o.ref)
			wrong := o.ref
			wrong.UID = types.UID("00000000-0000-0000-0000-000000000001")
			// As upstream (garbagecollector.go isDangling): a reference whose
			// UID is not the named object's is dangling, so a dependent
			// with only that reference is garbage...
			f.dependents("uid-bad", 3, wrong)
			// ...and one with a live owner besides only loses it.
			f.dependents("uid-mixed", 3, wrong, o.ref)
			// A reference to an object that does not exist at all is
			// dangling too.
			f.dependents("uid-missing", 3, metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: "never-was", UID: "00000000-0000-0000-0000-000000000002"})
			f.waitGone("uid-bad", 30*time.Second)
			f.waitGone("uid-missing", 30*time.Second)
			eventually(t, 30*time.Second, "dangling reference removed", func() error {
				items, err := f.list("uid-mixed")
				if err != nil {
					return err
				}
				if len(items) != 3 {
					return fmt.Errorf("%d left, want all 3 kept", len(items))
				}
				for _, cm := range items {
					if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != o.ref.UID {
						return fmt.Errorf("%s owner references %v, want only the live owner", cm.Name, cm.OwnerReferences)
					}
				}
				return nil
			})
			// The object the wrong references named is left alone, and so
			// are its real dependents.
			if _, err := f.get(o); err != nil {
				t.Errorf("the owner named with a wrong UID: %v", err)
			}
			if items, err := f.list("uid-good"); err != nil || len(items) != 3 {
				t.Errorf("the owner's real dependents: %d (%v), want 3", len(items), err)
			}
		})

		t.Run("cycle", func(t *testing.T) {
			f := f.with(t)
			// a <-> b, each blocking the other, deleted in the foreground;
			// then c -> d -> e -> c in the background.
			ctx := context.Background()
			cms := e.cs.CoreV1().ConfigMaps(f.ns)
			mk := func(names ...string) []owner {
				var out []owner
				for _, n := range names {
					cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"set": "cycle"}}}, metav1.CreateOptions{})
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, owner{gvr: corev1.SchemeGroupVersion.WithResource("configmaps"), namespace: f.ns,
						ref: metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: n, UID: cm.UID}})
				}
				// Each is owned by the next, the last by the first.
				for i, o := range out {
					cm, err := cms.Get(ctx, o.ref.Name, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					cm.OwnerReferences = []metav1.OwnerReference{blocking(out[(i+1)%len(out)].ref)}
					if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				return out
			}
			two := mk("cycle-a", "cycle-b")
			three := mk("cycle-c", "cycle-d", "cycle-e")
			f.delete(two[0], policy(metav1.DeletePropagationForeground))
			f.delete(three[0], policy(metav1.DeletePropagationBackground))
			f.waitGone("cycle", 60*time.Second)
		})

		t.Run("kubectl delete --cascade", func(t *testing.T) {
			f := f.with(t)
			for i, kubectl := range kubectls(t) {
				for _, cascade := range []string{"orphan", "foreground", "background"} {
					name := fmt.Sprintf("kc-%d-%s", i, cascade)
					o := f.secretOwner(name)
					f.dependents(name, 50, blocking(o.ref))
					// kubectl waits for the owner to be gone: before the
					// collector, --cascade=orphan and foreground hung here.
					out, stderr, err := runKubectl(t, kubectl, e.srv.Kubeconfig, "delete", "secret", name, "-n", f.ns, "--cascade="+cascade)
					if err != nil {
						t.Fatalf("%s delete --cascade=%s: %v: %s %s", kubectl, cascade, err, out, stderr)
					}
					if cascade == "orphan" {
						if items, err := f.list(name); err != nil || len(items) != 50 {
							t.Errorf("%s --cascade=orphan: %d dependents (%v), want 50", kubectl, len(items), err)
						}
						continue
					}
					f.waitGone(name, 60*time.Second)
				}
			}
		})

		t.Run("namespace with a deleting owner terminates", func(t *testing.T) {
			f := f.with(t)
			ctx := context.Background()
			ns := fmt.Sprintf("gc-ns-%d", time.Now().UnixNano()%1e6)
			if _, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			g := f.with(t)
			g.ns = ns
			for _, p := range []metav1.DeletionPropagation{metav1.DeletePropagationOrphan, metav1.DeletePropagationForeground} {
				o := g.secretOwner("held-" + strings.ToLower(string(p)))
				g.dependents("held-"+strings.ToLower(string(p)), 10, blocking(o.ref))
				g.delete(o, policy(p))
			}
			if err := e.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 60*time.Second, "namespace gone", func() error {
				_, err := e.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return nil
				}
				if err != nil {
					return err
				}
				return errors.New("still terminating")
			})
		})
	})
}
