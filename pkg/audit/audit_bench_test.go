package audit_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/server/filters"
)

// BenchmarkAuditPerRequest is the cost auditing adds to one request at
// each level: the audit filters, the handler's LogRequestObject and
// LogResponseObject calls (a ConfigMap with managedFields), and the log
// backend writing JSON lines to a file (each event is written; the
// measured time includes the backend's share through its queue only when
// it falls behind). "off" is the same chain without a backend.
func BenchmarkAuditPerRequest(b *testing.B) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", UID: "u", ResourceVersion: "12", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Data:       map[string]string{"key": "value", "other": "a longer value for a more typical object size"},
	}
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		audit.LogRequestObject(r.Context(), cm, corev1.SchemeGroupVersion, gvr, "", scheme.Codecs)
		audit.LogResponseObject(r.Context(), cm, corev1.SchemeGroupVersion, scheme.Codecs)
		w.WriteHeader(http.StatusOK)
	})
	for _, level := range []audit.Level{"off", audit.LevelNone, audit.LevelMetadata, audit.LevelRequest, audit.LevelRequestResponse} {
		b.Run(string(level), func(b *testing.B) {
			var backend audit.Backend
			if level != "off" {
				lb, err := audit.OpenLogBackend(filepath.Join(b.TempDir(), "audit.log"), slog.New(slog.DiscardHandler))
				if err != nil {
					b.Fatal(err)
				}
				if err := lb.Run(nil); err != nil {
					b.Fatal(err)
				}
				defer lb.Shutdown()
				backend = lb
			}
			// A rule evaluator (not a fixed Policy), as with --audit-policy-file.
			p, err := audit.ParsePolicy([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: " + string(orNone(level)) + "\n"))
			if err != nil {
				b.Fatal(err)
			}
			h := filters.WithAuditInit(filters.WithRequestInfo(
				filters.WithAudit(handler, backend, audit.NewPolicyEvaluator(p), filters.DefaultLongRunning, nil),
				request.NewResolver(), nil))
			req := httptest.NewRequest(http.MethodPut, "/api/v1/namespaces/ns/configmaps/cm", nil)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}

func orNone(l audit.Level) audit.Level {
	if l == "off" {
		return audit.LevelNone
	}
	return l
}
