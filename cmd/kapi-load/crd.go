package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// runCRD measures custom resources: the time from creating a CRD to its
// Established condition and to the first successful list of its
// resources, then create/get/update/list/delete of n custom resources at
// concurrency c (dynamic client, JSON), optionally with a CEL rule on
// every write. The CRD is deleted at the end.
func runCRD(args []string) error {
	fs := flag.NewFlagSet("crd", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "kapi-data/admin.kubeconfig", "admin kubeconfig of the server")
	conc := fs.Int("c", 8, "concurrent workers")
	n := fs.Int("n", 2000, "operations of each kind")
	withCEL := fs.Bool("cel", false, "add an x-kubernetes-validations rule (with a transition rule) to the schema")
	_ = fs.Parse(args)
	ctx := context.Background()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS = -1
	cs, err := clientFor(*kubeconfig)
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns, cleanup, err := tempNamespace(ctx, cs, "kapi-crd-")
	if err != nil {
		return err
	}
	defer cleanup()

	group := fmt.Sprintf("load%d.example.com", time.Now().UnixNano()%1e9)
	crd := loadCRD(group, *withCEL)
	start := time.Now()
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create CRD: %w", err)
	}
	defer func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	}()
	established, err := poll(ctx, func() (bool, error) {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("wait for Established: %w", err)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "loads"}
	res := dyn.Resource(gvr).Namespace(ns)
	if _, err := poll(ctx, func() (bool, error) {
		_, err := res.List(ctx, metav1.ListOptions{})
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("wait for the resource to be served: %w", err)
	}
	served := time.Since(start)
	fmt.Printf("CRD create -> Established %v, -> served %v (cel=%v)\n", established.Round(time.Microsecond), served.Round(time.Microsecond), *withCEL)

	objs := make([]*unstructured.Unstructured, *n)
	name := func(i int) string { return "cr-" + strconv.Itoa(i) }
	newObj := func(i int) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Load",
			"metadata": map[string]any{"name": name(i)},
			"spec":     map[string]any{"replicas": int64(1), "image": "nginx:1.27"},
		}}
		return u
	}
	return runOps([]op{
		{"create", func(i int) error {
			u, err := res.Create(ctx, newObj(i), metav1.CreateOptions{})
			objs[i] = u
			return err
		}},
		{"get", func(i int) error { _, err := res.Get(ctx, name(i), metav1.GetOptions{}); return err }},
		{"update", func(i int) error {
			u := objs[i].DeepCopy()
			if err := unstructured.SetNestedField(u.Object, int64(2), "spec", "replicas"); err != nil {
				return err
			}
			_, err := res.Update(ctx, u, metav1.UpdateOptions{})
			return err
		}},
		{"list (100 items)", func(int) error {
			_, err := res.List(ctx, metav1.ListOptions{Limit: 100})
			return err
		}},
		{"delete", func(i int) error { return res.Delete(ctx, name(i), metav1.DeleteOptions{}) }},
	}, *conc, *n)
}

func loadCRD(group string, withCEL bool) *apiextensionsv1.CustomResourceDefinition {
	spec := apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"replicas": {Type: "integer", Minimum: float64Ptr(0)},
			"image":    {Type: "string"},
		},
	}
	if withCEL {
		spec.XValidations = apiextensionsv1.ValidationRules{
			{Rule: "self.replicas <= 100", Message: "at most 100 replicas"},
			{Rule: "self.image == oldSelf.image", Message: "image is immutable"},
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "loads." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "loads", Singular: "load", Kind: "Load", ListKind: "LoadList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
				}},
			}},
		},
	}
}

// poll calls cond every 5 ms until it is true, for at most a minute, and
// returns the time that took.
func poll(ctx context.Context, cond func() (bool, error)) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		ok, err := cond()
		if err != nil {
			return 0, err
		}
		if ok {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func float64Ptr(f float64) *float64 { return &f }
