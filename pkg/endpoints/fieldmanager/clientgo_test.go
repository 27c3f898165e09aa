package fieldmanager_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// warnings collects the Warning headers a client receives.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

type env struct {
	cs       *kubernetes.Clientset
	warnings *warnings
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := kapitest.Start(t)
	cfg := rest.CopyConfig(srv.Config)
	cfg.UserAgent = "ssa-test/1.0 (linux/amd64)"
	cfg.QPS = -1
	w := &warnings{}
	cfg.WarningHandlerWithContext = w
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &env{cs: cs, warnings: w}
}

// rawPatch sends a PATCH to the configmap name in default and returns the
// status code and the error (a StatusError for failures).
func (e *env) rawPatch(t *testing.T, resource, name string, pt types.PatchType, body string, params ...string) (int, error) {
	t.Helper()
	req := e.cs.CoreV1().RESTClient().Patch(pt).Resource(resource).Name(name).Body([]byte(body))
	if resource != "namespaces" {
		req = req.Namespace("default")
	}
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	var code int
	err := req.Do(context.Background()).StatusCode(&code).Error()
	return code, err
}

// owners maps each manager of obj to its operation and the fields it owns.
type owner struct {
	operation   metav1.ManagedFieldsOperationType
	subresource string
	fields      string
}

func owners(t *testing.T, m metav1.Object) map[string]owner {
	t.Helper()
	out := map[string]owner{}
	for _, e := range m.GetManagedFields() {
		if e.FieldsType != "FieldsV1" || e.Time == nil || e.FieldsV1 == nil {
			t.Fatalf("got entry %+v, want FieldsV1 with a time", e)
		}
		out[e.Manager] = owner{operation: e.Operation, subresource: e.Subresource, fields: string(e.FieldsV1.Raw)}
	}
	return out
}

func statusOf(t *testing.T, err error) metav1.Status {
	t.Helper()
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		t.Fatalf("got error %v, want an API status", err)
	}
	return se.Status()
}

func TestServerSideApply(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cms := e.cs.CoreV1().ConfigMaps("default")

	t.Run("managers of different keys", func(t *testing.T) {
		if _, err := cms.Apply(ctx, corev1ac.ConfigMap("two", "default").WithData(map[string]string{"a": "1"}), metav1.ApplyOptions{FieldManager: "alice"}); err != nil {
			t.Fatal(err)
		}
		cm, err := cms.Apply(ctx, corev1ac.ConfigMap("two", "default").WithData(map[string]string{"b": "2"}), metav1.ApplyOptions{FieldManager: "bob"})
		if err != nil {
			t.Fatalf("apply of another key by another manager: %v", err)
		}
		if cm.Data["a"] != "1" || cm.Data["b"] != "2" {
			t.Fatalf("got data %v, want a=1 and b=2", cm.Data)
		}
		o := owners(t, cm)
		if o["alice"].operation != metav1.ManagedFieldsOperationApply || !strings.Contains(o["alice"].fields, `"f:a"`) || strings.Contains(o["alice"].fields, `"f:b"`) {
			t.Errorf("got alice %+v, want an Apply owning data.a only", o["alice"])
		}
		if o["bob"].operation != metav1.ManagedFieldsOperationApply || !strings.Contains(o["bob"].fields, `"f:b"`) || strings.Contains(o["bob"].fields, `"f:a"`) {
			t.Errorf("got bob %+v, want an Apply owning data.b only", o["bob"])
		}
	})

	t.Run("conflict then force", func(t *testing.T) {
		if _, err := cms.Apply(ctx, corev1ac.ConfigMap("conflict", "default").WithData(map[string]string{"x": "1"}), metav1.ApplyOptions{FieldManager: "alice"}); err != nil {
			t.Fatal(err)
		}
		_, err := cms.Apply(ctx, corev1ac.ConfigMap("conflict", "default").WithData(map[string]string{"x": "2"}), metav1.ApplyOptions{FieldManager: "bob"})
		st := statusOf(t, err)
		want := `Apply failed with 1 conflict: conflict with "alice": .data.x`
		if st.Code != http.StatusConflict || st.Reason != metav1.StatusReasonConflict || st.Message != want {
			t.Fatalf("got %d %s %q, want 409 Conflict %q", st.Code, st.Reason, st.Message, want)
		}
		if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != metav1.CauseTypeFieldManagerConflict ||
			st.Details.Causes[0].Field != ".data.x" || st.Details.Causes[0].Message != `conflict with "alice"` {
			t.Fatalf("got details %+v, want one FieldManagerConflict cause on .data.x", st.Details)
		}

		cm, err := cms.Apply(ctx, corev1ac.ConfigMap("conflict", "default").WithData(map[string]string{"x": "2"}), metav1.ApplyOptions{FieldManager: "bob", Force: true})
		if err != nil {
			t.Fatalf("forced apply: %v", err)
		}
		o := owners(t, cm)
		if cm.Data["x"] != "2" || !strings.Contains(o["bob"].fields, `"f:x"`) {
			t.Fatalf("got data %v, owners %v, want x=2 owned by bob", cm.Data, o)
		}
		if a, ok := o["alice"]; ok && strings.Contains(a.fields, `"f:x"`) {
			t.Fatalf("got alice %+v, want it to have lost data.x", a)
		}
	})

	t.Run("apply creates", func(t *testing.T) {
		code, err := e.rawPatch(t, "configmaps", "created", types.ApplyPatchType,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"created","labels":{"app":"x"}},"data":{"k":"v"}}`, "fieldManager", "creator")
		if err != nil || code != http.StatusCreated {
			t.Fatalf("got %d %v, want 201", code, err)
		}
		cm, err := cms.Get(ctx, "created", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o := owners(t, cm)
		if len(o) != 1 || o["creator"].operation != metav1.ManagedFieldsOperationApply ||
			!strings.Contains(o["creator"].fields, `"f:k"`) || !strings.Contains(o["creator"].fields, `"f:app"`) {
			t.Fatalf("got owners %+v, want creator's Apply of data.k and labels.app", o)
		}
		if cm.UID == "" || cm.CreationTimestamp.IsZero() || cm.Labels["app"] != "x" {
			t.Fatalf("got %+v, want a stored object with its label", cm.ObjectMeta)
		}
		code, err = e.rawPatch(t, "configmaps", "created", types.ApplyPatchType,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"created","labels":{"app":"x"}},"data":{"k":"v2"}}`, "fieldManager", "creator")
		if err != nil || code != http.StatusOK {
			t.Fatalf("got %d %v, want 200 for an apply to an existing object", code, err)
		}
	})

	t.Run("dry run", func(t *testing.T) {
		cm, err := cms.Apply(ctx, corev1ac.ConfigMap("dry", "default").WithData(map[string]string{"k": "v"}),
			metav1.ApplyOptions{FieldManager: "m", DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["k"] != "v" || len(cm.ManagedFields) != 1 {
			t.Fatalf("got %+v, want the object that would be created", cm)
		}
		if _, err := cms.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("got %v after a dry-run apply, want NotFound", err)
		}
	})

	t.Run("managedFields on every write", func(t *testing.T) {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "writes"}, Data: map[string]string{"c": "1"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Without fieldManager, the manager is the User-Agent's prefix.
		if o := owners(t, cm); o["ssa-test"].operation != metav1.ManagedFieldsOperationUpdate || !strings.Contains(o["ssa-test"].fields, `"f:c"`) {
			t.Fatalf("got owners %+v after create, want an Update by ssa-test owning data.c", o)
		}
		cm.Data["u"] = "1"
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "updater"}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			pt      types.PatchType
			body    string
			manager string
			field   string
		}{
			{types.JSONPatchType, `[{"op":"add","path":"/data/j","value":"1"}]`, "json-patcher", `"f:j"`},
			{types.MergePatchType, `{"data":{"m":"1"}}`, "merge-patcher", `"f:m"`},
			{types.StrategicMergePatchType, `{"data":{"s":"1"}}`, "smp-patcher", `"f:s"`},
		} {
			if code, err := e.rawPatch(t, "configmaps", "writes", p.pt, p.body, "fieldManager", p.manager); err != nil || code != http.StatusOK {
				t.Fatalf("%s: got %d %v, want 200", p.pt, code, err)
			}
		}
		cm, err = cms.Apply(ctx, corev1ac.ConfigMap("writes", "default").WithData(map[string]string{"a": "1"}), metav1.ApplyOptions{FieldManager: "applier"})
		if err != nil {
			t.Fatal(err)
		}
		o := owners(t, cm)
		want := map[string]struct {
			op    metav1.ManagedFieldsOperationType
			field string
		}{
			"ssa-test":      {metav1.ManagedFieldsOperationUpdate, `"f:c"`},
			"updater":       {metav1.ManagedFieldsOperationUpdate, `"f:u"`},
			"json-patcher":  {metav1.ManagedFieldsOperationUpdate, `"f:j"`},
			"merge-patcher": {metav1.ManagedFieldsOperationUpdate, `"f:m"`},
			"smp-patcher":   {metav1.ManagedFieldsOperationUpdate, `"f:s"`},
			"applier":       {metav1.ManagedFieldsOperationApply, `"f:a"`},
		}
		if len(o) != len(want) {
			t.Fatalf("got owners %+v, want %v", o, want)
		}
		for m, w := range want {
			got := o[m]
			if got.operation != w.op || !strings.Contains(got.fields, w.field) || strings.Count(got.fields, `"f:`) != 2 {
				t.Errorf("got %s %+v, want %s owning only data %s", m, got, w.op, w.field)
			}
		}
		for _, entry := range cm.ManagedFields {
			if entry.APIVersion != "v1" || entry.Subresource != "" {
				t.Errorf("got entry %+v, want apiVersion v1 and no subresource", entry)
			}
		}
	})

	t.Run("requests refused", func(t *testing.T) {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "refused"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name     string
			pt       types.PatchType
			body     string
			params   []string
			wantCode int32
			wantMsg  string
		}{
			{"apply without fieldManager", types.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"refused"}}`, nil,
				http.StatusUnprocessableEntity, `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
			{"force on a merge patch", types.MergePatchType, `{}`, []string{"force", "true", "fieldManager", "m"},
				http.StatusUnprocessableEntity, `PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`},
			// go-restful's route refuses it (CBOR is gated off): what
			// kube-apiserver v1.37.2 answers.
			{"apply as CBOR", types.ApplyCBORPatchType, `{}`, []string{"fieldManager", "m"},
				http.StatusUnsupportedMediaType, "415: Unsupported Media Type"},
			{"apply of another kind", types.ApplyPatchType, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"refused"}}`, []string{"fieldManager", "m"},
				http.StatusBadRequest, "invalid object type: /v1, Kind=Secret"},
			{"apply of another version", types.ApplyPatchType, `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"refused"}}`, []string{"fieldManager", "m"},
				http.StatusBadRequest, "invalid object type: /v2, Kind=ConfigMap"},
			{"apply of another name", types.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}`, []string{"fieldManager", "m"},
				http.StatusBadRequest, "the name of the object (other) does not match the name on the URL (refused)"},
			{"apply into another namespace", types.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"refused","namespace":"kube-system"}}`, []string{"fieldManager", "m"},
				http.StatusBadRequest, "the namespace of the provided object does not match the namespace sent on the request"},
			{"apply of managedFields", types.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"refused","managedFields":[{"manager":"x"}]}}`, []string{"fieldManager", "m"},
				http.StatusBadRequest, "metadata.managedFields must be nil"},
			{"apply of an unknown field", types.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"refused"},"spec":{}}`, []string{"fieldManager", "m", "fieldValidation", "Strict"},
				http.StatusBadRequest, "failed to create typed patch object (/refused; /v1, Kind=ConfigMap): .spec: field not declared in schema"},
			{"apply of a value its type cannot hold", types.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"refused"},"binaryData":{"b":"not base64"}}`, []string{"fieldManager", "m"},
				http.StatusBadRequest, "illegal base64 data"},
			{"apply of duplicate keys, strict", types.ApplyPatchType, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: refused\ndata:\n  k: a\n  k: b\n", []string{"fieldManager", "m", "fieldValidation", "Strict"},
				http.StatusBadRequest, `error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:` + "\n" + `  line 7: key "k" already set in map`},
			{"apply of undecodable YAML", types.ApplyPatchType, "a: [", []string{"fieldManager", "m"},
				http.StatusBadRequest, "error decoding YAML: "},
			{"apply with a uid, creating", types.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"uid","uid":"7d8e1c1e-1a8b-4b9b-9d38-7e9c3f4b1a20"}}`, []string{"fieldManager", "m"},
				http.StatusConflict, "uid mismatch: the provided object specified uid 7d8e1c1e-1a8b-4b9b-9d38-7e9c3f4b1a20, and no existing object was found"},
			{"apply with a stale resourceVersion", types.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"refused","resourceVersion":"1"}}`, []string{"fieldManager", "m"},
				http.StatusConflict, "the object has been modified"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				name := "refused"
				if strings.Contains(tc.body, `"uid"`) {
					name = "uid"
				}
				_, err := e.rawPatch(t, "configmaps", name, tc.pt, tc.body, tc.params...)
				st := statusOf(t, err)
				if st.Code != tc.wantCode || !strings.Contains(st.Message, tc.wantMsg) {
					t.Fatalf("got %d %q, want %d containing %q", st.Code, st.Message, tc.wantCode, tc.wantMsg)
				}
			})
		}
		if _, err := cms.Get(ctx, "uid", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("got %v, want the refused apply not to have created uid", err)
		}
	})

	t.Run("duplicate keys warn by default", func(t *testing.T) {
		e.warnings.take()
		body := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: warned\ndata:\n  k: a\n  k: b\n"
		if code, err := e.rawPatch(t, "configmaps", "warned", types.ApplyPatchType, body, "fieldManager", "m"); err != nil || code != http.StatusCreated {
			t.Fatalf("got %d %v, want 201", code, err)
		}
		if got, want := e.warnings.take(), []string{`line 7: key "k" already set in map`}; !slices.Equal(got, want) {
			t.Fatalf("got warnings %q, want %q", got, want)
		}
	})

	t.Run("status subresource", func(t *testing.T) {
		nss := e.cs.CoreV1().Namespaces()
		if _, err := nss.Apply(ctx, corev1ac.Namespace("ssa-status"), metav1.ApplyOptions{FieldManager: "owner"}); err != nil {
			t.Fatal(err)
		}
		// Through the main resource, status is ignored and not owned.
		ns, err := nss.Apply(ctx, corev1ac.Namespace("ssa-status").
			WithStatus(corev1ac.NamespaceStatus().WithConditions(corev1ac.NamespaceCondition().WithType("Main").WithStatus(corev1.ConditionTrue))),
			metav1.ApplyOptions{FieldManager: "owner"})
		if err != nil {
			t.Fatal(err)
		}
		if len(ns.Status.Conditions) != 0 || strings.Contains(owners(t, ns)["owner"].fields, "f:status") {
			t.Fatalf("got status %+v and owners %+v, want status untouched and not owned", ns.Status, owners(t, ns))
		}
		// Through /status, only status changes.
		ns, err = nss.ApplyStatus(ctx, corev1ac.Namespace("ssa-status").
			WithSpec(corev1ac.NamespaceSpec().WithFinalizers("example.com/ignored")).
			WithStatus(corev1ac.NamespaceStatus().WithConditions(corev1ac.NamespaceCondition().WithType("Ready").WithStatus(corev1.ConditionTrue))),
			metav1.ApplyOptions{FieldManager: "status-owner"})
		if err != nil {
			t.Fatal(err)
		}
		if len(ns.Status.Conditions) != 1 || ns.Status.Conditions[0].Type != "Ready" {
			t.Fatalf("got status %+v, want the Ready condition", ns.Status)
		}
		if slices.Contains(ns.Spec.Finalizers, "example.com/ignored") {
			t.Fatalf("got spec %+v, want it untouched by /status", ns.Spec)
		}
		o := owners(t, ns)["status-owner"]
		if o.operation != metav1.ManagedFieldsOperationApply || o.subresource != "status" ||
			!strings.Contains(o.fields, `"k:{\"type\":\"Ready\"}"`) || strings.Contains(o.fields, "f:spec") {
			t.Fatalf("got status-owner %+v, want an Apply on status owning the Ready condition only", o)
		}
		// Applying /status to a missing object does not create it.
		_, err = nss.ApplyStatus(ctx, corev1ac.Namespace("ssa-missing").WithStatus(corev1ac.NamespaceStatus()), metav1.ApplyOptions{FieldManager: "m"})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("got %v, want NotFound", err)
		}
	})

	t.Run("managers reset by the client", func(t *testing.T) {
		cm, err := cms.Apply(ctx, corev1ac.ConfigMap("reset", "default").WithData(map[string]string{"k": "v"}), metav1.ApplyOptions{FieldManager: "m"})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"managedFields": []any{map[string]any{}}}})
		if _, err := e.rawPatch(t, "configmaps", "reset", types.MergePatchType, string(body)); err != nil {
			t.Fatal(err)
		}
		if cm, err = cms.Get(ctx, "reset", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(cm.ManagedFields) != 0 {
			t.Fatalf("got managedFields %+v, want them reset by [{}]", cm.ManagedFields)
		}
	})
}
