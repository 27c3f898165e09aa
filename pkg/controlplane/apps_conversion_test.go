package controlplane_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// The apps/v1 bodies of these tests. kube-apiserver converts DaemonSets and
// Deployments to an internal version that holds two annotations as int64
// fields (k8s.io/kubernetes pkg/apis/apps/v1/conversion.go, v1.37.2): the
// daemonset's template generation and the deployment's deprecated
// rollback revision.
const (
	convDaemonSet = `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"%s"%s},
"spec":{"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},
"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	convDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"%s"%s},
"spec":{"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},
"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
)

func convBody(format, name, annotation, value string) []byte {
	ann := ""
	if annotation != "" {
		ann = fmt.Sprintf(`,"annotations":{%q:%q}`, annotation, value)
	}
	return fmt.Appendf(nil, format, name, ann)
}

// TestAppsConversionErrors checks that the values kube-apiserver's
// conversion to its internal version refuses are refused where its
// decoding fails, with its status and message. The expected answers were
// recorded from kube-apiserver v1.37.2 (session 18, kubectl and
// `kubectl get --raw`-equivalent requests on the same bodies):
//
//   - create or update with a bad annotation: 400 BadRequest `<Kind> in
//     version "v1" cannot be handled as a <Kind>: <conversion error>`;
//   - JSON or merge patch producing one: 422 Invalid, one cause on field
//     `patch` whose message ends with the conversion error;
//   - strategic merge patch and server-side apply producing one: upstream
//     answers 500 with the bare conversion error (apply: `failed to
//     convert to unversioned (<ns>/<name>; apps/v1, Kind=DaemonSet): ...`);
//     kapi deliberately answers 400 with the same message.
//
// The conversion errors: a daemonset's `strconv.ParseInt: parsing "abc":
// invalid syntax`, a deployment's `failed to parse
// annotation[deprecated.deployment.rollback.to]=abc as int64:
// strconv.ParseInt: parsing "abc": invalid syntax`.
func TestAppsConversionErrors(t *testing.T) {
	srv := kapitest.Start(t)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	rc := cs.AppsV1().RESTClient()
	ctx := t.Context()
	const ns = "default"

	kinds := []struct {
		resource, kind, format, annotation, convErr string
	}{
		{"daemonsets", "DaemonSet", convDaemonSet, "deprecated.daemonset.template.generation",
			`strconv.ParseInt: parsing "abc": invalid syntax`},
		{"deployments", "Deployment", convDeployment, "deprecated.deployment.rollback.to",
			`failed to parse annotation[deprecated.deployment.rollback.to]=abc as int64: strconv.ParseInt: parsing "abc": invalid syntax`},
	}
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			// Create.
			err := rc.Post().Namespace(ns).Resource(k.resource).Body(convBody(k.format, "bad", k.annotation, "abc")).
				SetHeader("Content-Type", "application/json").Do(ctx).Error()
			wantStatus(t, "create", err, http.StatusBadRequest, metav1.StatusReasonBadRequest,
				k.kind+` in version "v1" cannot be handled as a `+k.kind+`: `+k.convErr)

			// A good object to update and patch.
			if err := rc.Post().Namespace(ns).Resource(k.resource).Body(convBody(k.format, "good", k.annotation, "3")).
				SetHeader("Content-Type", "application/json").Do(ctx).Error(); err != nil {
				t.Fatalf("create good: %v", err)
			}

			// Update.
			err = rc.Put().Namespace(ns).Resource(k.resource).Name("good").Body(convBody(k.format, "good", k.annotation, "abc")).
				SetHeader("Content-Type", "application/json").Do(ctx).Error()
			wantStatus(t, "update", err, http.StatusBadRequest, metav1.StatusReasonBadRequest,
				k.kind+` in version "v1" cannot be handled as a `+k.kind+`: `+k.convErr)

			patch := []byte(`{"metadata":{"annotations":{"` + k.annotation + `":"abc"}}}`)
			jsonPatch := []byte(`[{"op":"replace","path":"/metadata/annotations/` +
				strings.ReplaceAll(k.annotation, "/", "~1") + `","value":"abc"}]`)
			for _, p := range []struct {
				pt   types.PatchType
				body []byte
			}{{types.MergePatchType, patch}, {types.JSONPatchType, jsonPatch}} {
				err = rc.Patch(p.pt).Namespace(ns).Resource(k.resource).Name("good").Body(p.body).Do(ctx).Error()
				var status apierrors.APIStatus
				if !errors.As(err, &status) || status.Status().Code != http.StatusUnprocessableEntity ||
					status.Status().Reason != metav1.StatusReasonInvalid {
					t.Fatalf("%s patch: want 422 Invalid, got %v", p.pt, err)
				}
				d := status.Status().Details
				if d == nil || len(d.Causes) != 1 || d.Causes[0].Field != "patch" ||
					!strings.HasSuffix(d.Causes[0].Message, `": `+k.convErr) {
					t.Fatalf("%s patch: want one cause on patch ending with the conversion error, got %+v", p.pt, d)
				}
			}

			err = rc.Patch(types.StrategicMergePatchType).Namespace(ns).Resource(k.resource).Name("good").Body(patch).Do(ctx).Error()
			wantStatus(t, "strategic merge patch", err, http.StatusBadRequest, metav1.StatusReasonBadRequest, k.convErr)

			// Nothing of it was stored.
			obj := map[string]any{}
			raw, err := rc.Get().Namespace(ns).Resource(k.resource).Name("good").DoRaw(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &obj); err != nil {
				t.Fatal(err)
			}
			ann := obj["metadata"].(map[string]any)["annotations"].(map[string]any)
			if v := ann[k.annotation]; v != "3" {
				t.Fatalf("stored %s = %v, want 3", k.annotation, v)
			}
		})
	}

	t.Run("apply", func(t *testing.T) {
		applied := convBody(convDaemonSet, "applied", "deprecated.daemonset.template.generation", "abc")
		err := rc.Patch(types.ApplyPatchType).Namespace(ns).Resource("daemonsets").Name("applied").
			Param("fieldManager", "tester").Body(applied).Do(ctx).Error()
		wantStatus(t, "apply", err, http.StatusBadRequest, metav1.StatusReasonBadRequest,
			`failed to convert to unversioned (/applied; apps/v1, Kind=DaemonSet): strconv.ParseInt: parsing "abc": invalid syntax`)
	})
}

// wantStatus fails t unless err is an API status of code, reason and
// message.
func wantStatus(t *testing.T, what string, err error, code int32, reason metav1.StatusReason, message string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("%s: want %d %s %q, got %v", what, code, reason, message, err)
	}
	s := status.Status()
	if s.Code != code || s.Reason != reason || s.Message != message {
		t.Fatalf("%s: want %d %s %q, got %d %s %q", what, code, reason, message, s.Code, s.Reason, s.Message)
	}
}

// TestDaemonSetTemplateGenerationManagedFields checks the managed fields of
// writes that leave the template generation annotation out. Upstream's
// decoding always yields the annotation (its internal template generation,
// 0 when the body has none, written back by its conversion to apps/v1), so
// its field manager records the writer as its owner: recorded from
// kube-apiserver v1.37.2 (session 18), a create without the annotation gives
// the creator `f:metadata: {f:annotations: {.: {}, f:deprecated.daemonset.template.generation: {}}}`
// and a replace without it then moves the annotation to the replacer,
// leaving the creator `f:annotations: {}`. The stored value is the
// strategy's (1 at create).
func TestDaemonSetTemplateGenerationManagedFields(t *testing.T) {
	srv := kapitest.Start(t)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	rc := cs.AppsV1().RESTClient()
	const key = "f:deprecated.daemonset.template.generation"

	created := writeDS(t, rc.Post().Namespace("default").Resource("daemonsets").Param("fieldManager", "creator"),
		convBody(convDaemonSet, "mf", "", ""))
	if got := annotation(created); got != "1" {
		t.Fatalf("created with template generation %q, want 1", got)
	}
	if got := ownedAnnotations(t, created, "creator"); got != `{".":{},"`+key+`":{}}` {
		t.Fatalf("creator owns annotations %s, want the template generation", got)
	}

	replaced := writeDS(t, rc.Put().Namespace("default").Resource("daemonsets").Name("mf").Param("fieldManager", "replacer"),
		convBody(convDaemonSet, "mf", "", ""))
	if got := annotation(replaced); got != "1" {
		t.Fatalf("replaced with template generation %q, want 1 (template unchanged)", got)
	}
	if got := ownedAnnotations(t, replaced, "creator"); got != `{}` {
		t.Fatalf("after the replace the creator owns annotations %s, want {}", got)
	}
	if got := ownedAnnotations(t, replaced, "replacer"); got != `{"`+key+`":{}}` {
		t.Fatalf("replacer owns annotations %s, want the template generation", got)
	}
}

type managedDS struct {
	Metadata struct {
		Annotations   map[string]string `json:"annotations"`
		ManagedFields []struct {
			Manager  string                     `json:"manager"`
			FieldsV1 map[string]json.RawMessage `json:"fieldsV1"`
		} `json:"managedFields"`
	} `json:"metadata"`
}

func writeDS(t *testing.T, req *rest.Request, body []byte) managedDS {
	t.Helper()
	raw, err := req.SetHeader("Content-Type", "application/json").Body(body).DoRaw(t.Context())
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	var ds managedDS
	if err := json.Unmarshal(raw, &ds); err != nil {
		t.Fatal(err)
	}
	return ds
}

func annotation(ds managedDS) string {
	return ds.Metadata.Annotations["deprecated.daemonset.template.generation"]
}

// ownedAnnotations is manager's f:metadata.f:annotations, compact JSON
// ("" when it owns none).
func ownedAnnotations(t *testing.T, ds managedDS, manager string) string {
	t.Helper()
	for _, e := range ds.Metadata.ManagedFields {
		if e.Manager != manager {
			continue
		}
		var md struct {
			Annotations json.RawMessage `json:"f:annotations"`
		}
		if raw, ok := e.FieldsV1["f:metadata"]; ok {
			if err := json.Unmarshal(raw, &md); err != nil {
				t.Fatal(err)
			}
		}
		return string(md.Annotations)
	}
	return ""
}
