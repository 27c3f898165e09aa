package componentstatus

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// closedPort returns a loopback URL nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "https://" + addr + "/healthz"
}

func TestHTTPServerCheck(t *testing.T) {
	healthy := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			_, _ = w.Write([]byte("ok"))
		case "/moved":
			http.Redirect(w, r, "/healthz", http.StatusFound)
		default:
			http.Error(w, "[-]poststarthook failed", http.StatusInternalServerError)
		}
	}))
	defer healthy.Close()
	refused := closedPort(t)
	cases := []struct {
		name       string
		server     *HTTPServer
		status     corev1.ConditionStatus
		msg, errIs string
	}{
		{"healthy", NewHTTPServer(healthy.URL+"/healthz", true), corev1.ConditionTrue, "ok", ""},
		{"redirect followed", NewHTTPServer(healthy.URL+"/moved", true), corev1.ConditionTrue, "ok", ""},
		{"failing", NewHTTPServer(healthy.URL+"/livez", true), corev1.ConditionFalse, "HTTP probe failed with statuscode: 500", ""},
		{"certificate not trusted", NewHTTPServer(healthy.URL+"/healthz", false), corev1.ConditionFalse,
			`Get "` + healthy.URL + `/healthz": tls: failed to verify certificate: x509: certificate signed by unknown authority`, ""},
		{"refused", NewHTTPServer(refused, true), corev1.ConditionFalse,
			`Get "` + refused + `": dial tcp ` + strings.TrimSuffix(strings.TrimPrefix(refused, "https://"), "/healthz") + `: connect: connection refused`, ""},
		{"invalid body", &HTTPServer{URL: healthy.URL + "/healthz", TLSConfig: NewHTTPServer("", true).TLSConfig, Validate: func([]byte) error {
			return errors.New("not json")
		}}, corev1.ConditionFalse, "ok", "not json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, msg, err := tc.server.Check(t.Context())
			errMsg := ""
			if err != nil {
				errMsg = err.Error()
			}
			if st != tc.status || msg != tc.msg || errMsg != tc.errIs {
				t.Errorf("got %s %q %q, want %s %q %q", st, msg, errMsg, tc.status, tc.msg, tc.errIs)
			}
		})
	}
}

func TestComponentStatuses(t *testing.T) {
	healthy := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer healthy.Close()
	storageErr := errors.New("error getting data from etcd: context deadline exceeded")
	r := NewREST(map[string]Server{
		"scheduler":          NewHTTPServer(healthy.URL+"/healthz", true),
		"controller-manager": NewHTTPServer(closedPort(t), true),
		"etcd-0":             StorageServer{Health: func(context.Context) error { return nil }},
		"etcd-1":             StorageServer{Health: func(context.Context) error { return storageErr }},
	})
	if r.NamespaceScoped() || !slices.Equal(r.ShortNames(), []string{"cs"}) || r.GetSingularName() != "componentstatus" {
		t.Error("want cluster-scoped componentstatus, short name cs")
	}
	w := &registrytest.Warnings{}
	ctx := warning.WithRecorder(registrytest.Context("", "v1", "componentstatuses", ""), w)
	obj, err := r.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list := obj.(*corev1.ComponentStatusList)
	var got []string
	for _, cs := range list.Items {
		c := cs.Conditions[0]
		got = append(got, strings.Join([]string{cs.Name, string(c.Type), string(c.Status), c.Message, c.Error}, "|"))
	}
	want := []string{
		"controller-manager|Healthy|False|",
		"etcd-0|Healthy|True|ok|",
		"etcd-1|Healthy|False||" + storageErr.Error(),
		"scheduler|Healthy|True|ok|",
	}
	if len(got) != 4 || !strings.HasPrefix(got[0], want[0]+`Get "https://127.0.0.1:`) || !slices.Equal(got[1:], want[1:]) {
		t.Errorf("got %q, want %q (controller-manager refused)", got, want)
	}
	if !slices.Equal(w.List(), []string{DeprecationWarning}) {
		t.Errorf("got warnings %q, want the deprecation warning", w.List())
	}
	// Selectors: metadata.name; components have no labels.
	obj, err = r.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "etcd-0")})
	if err != nil {
		t.Fatal(err)
	}
	if items := obj.(*corev1.ComponentStatusList).Items; len(items) != 1 || items[0].Name != "etcd-0" {
		t.Errorf("got %d items for metadata.name=etcd-0, want etcd-0", len(items))
	}
	sel, _ := labels.Parse("tier=control-plane")
	obj, err = r.List(ctx, &metainternalversion.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if items := obj.(*corev1.ComponentStatusList).Items; items == nil || len(items) != 0 {
		t.Errorf("got %v for a label selector, want an empty list", items)
	}
	// Get.
	obj, err = r.Get(ctx, "etcd-0", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cs := obj.(*corev1.ComponentStatus); cs.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("got %+v, want etcd-0 healthy", cs)
	}
	if _, err := r.Get(ctx, "etcd-9", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("got %v, want NotFound for an unknown component", err)
	}
	// Table.
	tbl, err := r.ConvertToTable(ctx, list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	// Upstream's printComponentStatus columns (pkg/printers/internalversion/printers.go).
	if want := []string{"Name", "Status", "Message", "Error"}; !slices.Equal(cols, want) {
		t.Errorf("got columns %v, want %v", cols, want)
	}
	wantRows := [][]any{
		{"etcd-0", "Healthy", "ok", ""},
		{"etcd-1", "Unhealthy", "", storageErr.Error()},
	}
	for i, want := range wantRows {
		if got := tbl.Rows[i+1].Cells; !slices.Equal(got, want) {
			t.Errorf("row %d: got %v, want %v", i+1, got, want)
		}
	}
	unknown, err := r.ConvertToTable(ctx, &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, nil)
	if err != nil || !slices.Equal(unknown.Rows[0].Cells, []any{"x", "Unknown", "", ""}) {
		t.Errorf("got %v, %v; want an Unknown row for a status without a Healthy condition", unknown, err)
	}
}

func TestDefaultServers(t *testing.T) {
	got := DefaultServers(func(context.Context) error { return nil })
	var names []string
	for name := range got {
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []string{"controller-manager", "etcd-0", "scheduler"}; !slices.Equal(names, want) {
		t.Errorf("got %v, want %v", names, want)
	}
	if s := got["scheduler"].(*HTTPServer); s.URL != "https://127.0.0.1:10259/healthz" || !s.TLSConfig.InsecureSkipVerify {
		t.Errorf("got scheduler %s, want upstream's https://127.0.0.1:10259/healthz without verification", s.URL)
	}
	if s := got["controller-manager"].(*HTTPServer); s.URL != "https://127.0.0.1:10257/healthz" {
		t.Errorf("got controller-manager %s, want upstream's https://127.0.0.1:10257/healthz", s.URL)
	}
	if _, ok := DefaultServers()["etcd-0"]; ok {
		t.Error("got etcd-0 without a storage health check")
	}
}
