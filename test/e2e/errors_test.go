package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// decodeStatus checks that body is a JSON v1 Status and returns it.
func decodeStatus(t *testing.T, body []byte) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("decode Status %q: %v", body, err)
	}
	if s.Kind != "Status" || s.APIVersion != "v1" {
		t.Fatalf("got %s %s, want a v1 Status: %s", s.APIVersion, s.Kind, body)
	}
	s.TypeMeta = metav1.TypeMeta{}
	return s
}

var (
	configMapsGR = schema.GroupResource{Resource: "configmaps"}
	namespacesGR = schema.GroupResource{Resource: "namespaces"}
)

// invalid is the Status kube-apiserver gives for a validation failure,
// built with apimachinery's own constructors.
func invalid(kind, name string, errs ...*field.Error) metav1.Status {
	return apierrors.NewInvalid(schema.GroupKind{Kind: kind}, name, errs).ErrStatus
}

func fieldInvalid(path *field.Path, value string, msgs []string) []*field.Error {
	var out []*field.Error
	for _, m := range msgs {
		out = append(out, field.Invalid(path, value, m))
	}
	return out
}

// TestErrorStatuses sends requests that fail and compares the whole Status
// with the one kube-apiserver gives.
func TestErrorStatuses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ns := e.newNamespace(t)
		coll := "/api/v1/namespaces/" + ns + "/configmaps"
		if r := e.raw(t, http.MethodPost, coll, []byte(`{"metadata":{"name":"a"},"data":{"k":"v"}}`)); r.code != http.StatusCreated {
			t.Fatalf("create a: got %d %s", r.code, r.body)
		}
		if r := e.raw(t, http.MethodPost, coll, []byte(`{"metadata":{"name":"frozen"},"immutable":true,"data":{"k":"v"}}`)); r.code != http.StatusCreated {
			t.Fatalf("create frozen: got %d %s", r.code, r.body)
		}
		// The namespace's first resourceVersion is older than a's: a stale
		// precondition.
		staleRV := "1"
		if r := e.raw(t, http.MethodGet, coll+"/a", nil); r.code == http.StatusOK {
			var obj map[string]any
			_ = json.Unmarshal(r.body, &obj)
			rv, _ := jsonPath(obj, "metadata", "resourceVersion").(string)
			if rv == "" || rv == staleRV {
				t.Fatalf("configmap a has resourceVersion %q", rv)
			}
		}
		bigValue := strings.Repeat("x", 3<<20+1)
		badKeyMsgs := validation.IsConfigMapKey("bad key")
		badNSMsgs := validation.IsDNS1123Label("Bad_Name")
		if len(badKeyMsgs) == 0 || len(badNSMsgs) == 0 {
			t.Fatal("apimachinery accepts the bad names the test sends")
		}
		const mediaTypes = "application/json, application/yaml, application/vnd.kubernetes.protobuf"

		for _, tc := range []struct {
			name    string
			method  string
			path    string
			body    string
			headers []string
			want    metav1.Status
			// wantPrefix only compares code, reason and the message's start
			// (for messages that quote a whole object).
			wantPrefix bool
		}{
			{
				name: "get missing", method: http.MethodGet, path: coll + "/x",
				want: apierrors.NewNotFound(configMapsGR, "x").ErrStatus,
			},
			{
				name: "delete missing", method: http.MethodDelete, path: coll + "/x",
				want: apierrors.NewNotFound(configMapsGR, "x").ErrStatus,
			},
			{
				name: "patch missing", method: http.MethodPatch, path: coll + "/x", body: `{"data":{"k":"v"}}`,
				headers: []string{"Content-Type", "application/merge-patch+json"},
				want:    apierrors.NewNotFound(configMapsGR, "x").ErrStatus,
			},
			{
				name: "update missing", method: http.MethodPut, path: coll + "/x", body: `{"metadata":{"name":"x","resourceVersion":"5"},"data":{"k":"v"}}`,
				want: apierrors.NewNotFound(configMapsGR, "x").ErrStatus,
			},
			{
				name: "already exists", method: http.MethodPost, path: coll, body: `{"metadata":{"name":"a"}}`,
				want: apierrors.NewAlreadyExists(configMapsGR, "a").ErrStatus,
			},
			{
				name: "stale resourceVersion", method: http.MethodPut, path: coll + "/a", body: `{"metadata":{"name":"a","resourceVersion":"` + staleRV + `"},"data":{"k":"w"}}`,
				want: apierrors.NewConflict(configMapsGR, "a", errorString(`the object has been modified; please apply your changes to the latest version and try again`)).ErrStatus,
			},
			{
				name: "stale delete precondition", method: http.MethodDelete, path: coll + "/a", body: `{"preconditions":{"resourceVersion":"` + staleRV + `"}}`,
				// As rest.BeforeDelete: the kind, not the resource, and the
				// record's resourceVersion, unknown here.
				wantPrefix: true,
				want:       apierrors.NewConflict(schema.GroupResource{Resource: "ConfigMap"}, "a", errorString(`the ResourceVersion in the precondition (`+staleRV+`) does not match the ResourceVersion in record (`)).ErrStatus,
			},
			{
				name: "invalid configmap key", method: http.MethodPost, path: coll, body: `{"metadata":{"name":"b"},"data":{"bad key":"v"}}`,
				want: invalid("ConfigMap", "b", fieldInvalid(field.NewPath("data").Key("bad key"), "bad key", badKeyMsgs)...),
			},
			{
				name: "invalid namespace name", method: http.MethodPost, path: "/api/v1/namespaces", body: `{"metadata":{"name":"Bad_Name"}}`,
				want: invalid("Namespace", "Bad_Name", fieldInvalid(field.NewPath("metadata", "name"), "Bad_Name", badNSMsgs)...),
			},
			{
				name: "immutable configmap", method: http.MethodPut, path: coll + "/frozen", body: `{"metadata":{"name":"frozen"},"immutable":true,"data":{"k":"changed"}}`,
				want: invalid("ConfigMap", "frozen", field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set")),
			},
			{
				name: "immutable configmap made mutable", method: http.MethodPatch, path: coll + "/frozen", body: `{"immutable":false}`,
				headers: []string{"Content-Type", "application/merge-patch+json"},
				want:    invalid("ConfigMap", "frozen", field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set")),
			},
			{
				name: "name in body differs from URL", method: http.MethodPut, path: coll + "/a", body: `{"metadata":{"name":"b"},"data":{"k":"v"}}`,
				want: apierrors.NewBadRequest("the name of the object (b) does not match the name on the URL (a)").ErrStatus,
			},
			{
				name: "namespace in body differs from URL", method: http.MethodPost, path: coll, body: `{"metadata":{"name":"c","namespace":"other"}}`,
				want: apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request").ErrStatus,
			},
			{
				name: "POST to an item", method: http.MethodPost, path: coll + "/a", body: `{"metadata":{"name":"a"}}`,
				want: apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "", "", 0, false).ErrStatus,
			},
			{
				name: "unknown Accept", method: http.MethodGet, path: coll + "/a", headers: []string{"Accept", "application/bogus"},
				// go-restful's route answers before the handler (kube-apiserver
				// v1.37.2 sent exactly this, with an empty details object).
				want: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
					Message: "406: Not Acceptable\n\nAvailable representations: " + mediaTypes, Details: &metav1.StatusDetails{}},
			},
			{
				name: "unknown Content-Type", method: http.MethodPost, path: coll, body: `name: c`, headers: []string{"Content-Type", "text/plain"},
				want: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType, Message: "the body of the request was in an unknown format - accepted media types include: " + mediaTypes},
			},
			{
				name: "body over 3 MiB", method: http.MethodPost, path: coll, body: `{"metadata":{"name":"big"},"data":{"k":"` + bigValue + `"}}`,
				want: apierrors.NewRequestEntityTooLargeError("limit is 3145728").ErrStatus,
			},
			{
				name: "configmap over 1 MiB", method: http.MethodPost, path: coll, body: `{"metadata":{"name":"big"},"data":{"k":"` + bigValue[:1<<20+1] + `"}}`,
				want: invalid("ConfigMap", "big", field.TooLong(field.NewPath(""), "", 1<<20)),
			},
			{
				name: "malformed JSON", method: http.MethodPost, path: coll, body: `{"metadata":`,
				wantPrefix: true,
				want:       metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest},
			},
			{
				name: "create in a missing namespace", method: http.MethodPost, path: "/api/v1/namespaces/nope/configmaps", body: `{"metadata":{"name":"a"}}`,
				want: apierrors.NewNotFound(namespacesGR, "nope").ErrStatus,
			},
			{
				name: "delete default", method: http.MethodDelete, path: "/api/v1/namespaces/default",
				want: apierrors.NewForbidden(namespacesGR, "default", errorString("this namespace may not be deleted")).ErrStatus,
			},
			{
				name: "delete kube-system", method: http.MethodDelete, path: "/api/v1/namespaces/kube-system",
				want: apierrors.NewForbidden(namespacesGR, "kube-system", errorString("this namespace may not be deleted")).ErrStatus,
			},
			{
				name: "bad label selector", method: http.MethodGet, path: coll + "?labelSelector=a%3D%3D%3Db",
				wantPrefix: true,
				want:       metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest, Message: "unable to parse requirement"},
			},
			{
				name: "unsupported field selector", method: http.MethodGet, path: coll + "?fieldSelector=data.k%3Dv",
				want: apierrors.NewBadRequest(`"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"`).ErrStatus,
			},
			// A namespace segment that cannot be a path segment is a 400
			// in every verb, never a storage key (kapi's choice, worded
			// as upstream's "Name parameter invalid" of NamespaceKeyFunc;
			// issue 12 point 11).
			{
				name: "namespace .. get", method: http.MethodGet, path: "/api/v1/namespaces/../configmaps/a",
				want: apierrors.NewBadRequest(`Namespace parameter invalid: "..": may not be '..'`).ErrStatus,
			},
			{
				name: "namespace . get", method: http.MethodGet, path: "/api/v1/namespaces/./configmaps/a",
				want: apierrors.NewBadRequest(`Namespace parameter invalid: ".": may not be '.'`).ErrStatus,
			},
			{
				name: "namespace .. list", method: http.MethodGet, path: "/api/v1/namespaces/../configmaps",
				want: apierrors.NewBadRequest(`Namespace parameter invalid: "..": may not be '..'`).ErrStatus,
			},
			{
				name: "namespace .. escaped list", method: http.MethodGet, path: "/api/v1/namespaces/%2e%2e/configmaps",
				want: apierrors.NewBadRequest(`Namespace parameter invalid: "..": may not be '..'`).ErrStatus,
			},
			{
				name: "namespace .. create", method: http.MethodPost, path: "/api/v1/namespaces/../configmaps", body: `{"metadata":{"name":"a"}}`,
				want: apierrors.NewBadRequest(`Namespace parameter invalid: "..": may not be '..'`).ErrStatus,
			},
			{
				name: "namespace .. deletecollection", method: http.MethodDelete, path: "/api/v1/namespaces/../configmaps",
				want: apierrors.NewBadRequest(`Namespace parameter invalid: "..": may not be '..'`).ErrStatus,
			},
			{
				name: "namespace . watch", method: http.MethodGet, path: "/api/v1/namespaces/./configmaps?watch=1",
				want: apierrors.NewBadRequest(`Namespace parameter invalid: ".": may not be '.'`).ErrStatus,
			},
			{
				// Upstream's etcd3 store on etcdrpc.ErrFutureRev:
				// storage.NewTooLargeResourceVersionError(requested, current).
				name: "exact future resourceVersion", method: http.MethodGet, path: coll + "?resourceVersion=999999999&resourceVersionMatch=Exact",
				wantPrefix: true,
				want:       metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGatewayTimeout, Reason: metav1.StatusReasonTimeout, Message: "Timeout: Too large resource version: 999999999, current: "},
			},
			{
				name: "unknown resource", method: http.MethodGet, path: "/api/v1/namespaces/" + ns + "/widgets",
				wantPrefix: true,
				want:       metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound},
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var body []byte
				if tc.body != "" {
					body = []byte(tc.body)
				}
				r := e.raw(t, tc.method, tc.path, body, tc.headers...)
				if r.code != int(tc.want.Code) {
					t.Fatalf("got %d %.300s, want %d", r.code, r.body, tc.want.Code)
				}
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("got Content-Type %q, want application/json", ct)
				}
				got := decodeStatus(t, r.body)
				if tc.wantPrefix {
					if got.Status != tc.want.Status || got.Reason != tc.want.Reason || !strings.HasPrefix(got.Message, tc.want.Message) {
						t.Errorf("got %s %s %q, want %s %s %q...", got.Status, got.Reason, got.Message, tc.want.Status, tc.want.Reason, tc.want.Message)
					}
					return
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("Status differs from kube-apiserver's (-want +got):\n%s", diff)
				}
			})
		}

		// Create with a resourceVersion: one that does not parse is
		// dropped and the object created, as kube-apiserver's storage
		// does (kubernetes/kubernetes#113847); a revision is refused.
		for _, rv := range []string{"abc", "-1", "00"} {
			name := "rv-" + strings.Trim(rv, "-")
			r := e.raw(t, http.MethodPost, coll, []byte(`{"metadata":{"name":"`+name+`","resourceVersion":"`+rv+`"}}`))
			if r.code != http.StatusCreated {
				t.Errorf("create with resourceVersion %q: got %d %s, want 201", rv, r.code, r.body)
				continue
			}
			var obj metav1.PartialObjectMetadata
			if err := json.Unmarshal(r.body, &obj); err != nil || obj.ResourceVersion == "" || obj.ResourceVersion == rv {
				t.Errorf("create with resourceVersion %q: got resourceVersion %q (%v), want the server's", rv, obj.ResourceVersion, err)
			}
		}
		if r := e.raw(t, http.MethodPost, coll, []byte(`{"metadata":{"name":"rv-5","resourceVersion":"5"}}`)); r.code != http.StatusInternalServerError ||
			!strings.Contains(decodeStatus(t, r.body).Message, "resourceVersion should not be set on objects to be created") {
			t.Errorf("create with resourceVersion 5: got %d %s, want upstream's 500", r.code, r.body)
		}
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }
