package e2e

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/installer"
)

// storedAsV1 are the resources kube-apiserver v1.37.2 still stores in an
// older version (the hash it publishes is of that version: e.g.
// "apiextensions.k8s.io/v1beta1/CustomResourceDefinition") while kapi
// stores them as v1 and publishes the hash of what it stores; the value is
// upstream's storage version.
var storedAsV1 = map[string]string{
	"apiextensions.k8s.io/v1 customresourcedefinitions":   "v1beta1",
	"certificates.k8s.io/v1 clustertrustbundles":          "v1beta1",
	"certificates.k8s.io/v1 podcertificaterequests":       "v1beta1",
	"resource.k8s.io/v1 devicetaintrules":                 "v1beta2",
	"storagemigration.k8s.io/v1 storageversionmigrations": "v1beta1",
}

// TestStorageVersionHashes compares discovery's storageVersionHash of every
// built-in resource with testdata/storage-version-hashes-v1.37.2.txt
// (observed on a real kube-apiserver v1.37.2): the same hash on the same
// resources, none on the others (subresources, resources without storage
// such as tokenreviews). A custom resource's hash, in every served version,
// is that of its CRD's storage version, as upstream's CRD handler publishes
// it (apiextensions-apiserver pkg/apiserver/customresource_discovery_controller.go).
func TestStorageVersionHashes(t *testing.T) {
	raw, err := os.ReadFile("testdata/storage-version-hashes-v1.37.2.txt")
	if err != nil {
		t.Fatal(err)
	}
	golden := map[string]string{} // "gv resource" -> hash
	gvs := map[string]bool{}
	for _, l := range strings.Split(string(raw), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 3 {
			t.Fatalf("bad line %q", l)
		}
		golden[f[0]+" "+f[1]] = f[2]
		gvs[f[0]] = true
	}
	forEachBackend(t, func(t *testing.T, e *env) {
		want := maps.Clone(golden)
		for gv := range gvs {
			list, err := e.cs.Discovery().ServerResourcesForGroupVersion(gv)
			if err != nil {
				t.Errorf("discovery of %s: %v", gv, err)
				continue
			}
			group, _, _ := strings.Cut(gv, "/")
			if !strings.Contains(gv, "/") {
				group = ""
			}
			for _, r := range list.APIResources {
				key := gv + " " + r.Name
				if upstream, ok := storedAsV1[key]; ok {
					if w := installer.StorageVersionHash(schema.GroupVersionKind{Group: group, Version: upstream, Kind: r.Kind}); w != want[key] {
						t.Errorf("%s: the golden hash %q is not of %s/%s %s: storedAsV1 is out of date", key, want[key], group, upstream, r.Kind)
					}
					want[key] = installer.StorageVersionHash(schema.GroupVersionKind{Group: group, Version: "v1", Kind: r.Kind})
				}
				if r.StorageVersionHash != want[key] {
					t.Errorf("%s: storageVersionHash %q, kube-apiserver v1.37.2 has %q", key, r.StorageVersionHash, want[key])
				}
				delete(want, key)
			}
		}
		for key := range want {
			t.Errorf("%s: not in kapi's discovery", key)
		}

		// A custom resource served in v1 (stored) and v2.
		group := fmt.Sprintf("svh%d.example.com", time.Now().UnixNano()%1e6)
		schemaProps := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}
		createCRD(t, e, &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "hashes." + group},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: group, Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "hashes", Singular: "hash", Kind: "Hash", ListKind: "HashList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
					{Name: "v1", Served: true, Storage: true, Schema: schemaProps},
					{Name: "v2", Served: true, Schema: schemaProps},
				},
			},
		})
		wantCR := installer.StorageVersionHash(schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Hash"})
		for _, v := range []string{"v1", "v2"} {
			eventually(t, time.Minute, group+"/"+v+" in discovery", func() error {
				list, err := e.cs.Discovery().ServerResourcesForGroupVersion(group + "/" + v)
				if err != nil {
					return err
				}
				for _, r := range list.APIResources {
					if r.Name == "hashes" {
						if r.StorageVersionHash != wantCR {
							return fmt.Errorf("storageVersionHash %q, want %q", r.StorageVersionHash, wantCR)
						}
						return nil
					}
				}
				return fmt.Errorf("hashes not listed")
			})
		}
	})
}
