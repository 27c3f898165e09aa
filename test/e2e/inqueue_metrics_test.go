package e2e

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
)

// blockingWebhook allows every review; those of objects labelled
// block=yes only once release is closed. seen counts the reviews of
// objects labelled probe=yes.
func blockingWebhook(t *testing.T) (svc *httptest.Server, release chan struct{}, blocked, seen *atomic.Int32) {
	release = make(chan struct{})
	blocked, seen = &atomic.Int32{}, &atomic.Int32{}
	svc = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var review struct {
			APIVersion string `json:"apiVersion"`
			Request    struct {
				UID    string `json:"uid"`
				Object struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				} `json:"object"`
			} `json:"request"`
		}
		if err := json.Unmarshal(body, &review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		labels := review.Request.Object.Metadata.Labels
		if labels["probe"] == "yes" {
			seen.Add(1)
		}
		if labels["block"] == "yes" {
			blocked.Add(1)
			select {
			case <-release:
			case <-time.After(25 * time.Second):
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": review.APIVersion, "kind": "AdmissionReview",
			"response": map[string]any{"uid": review.Request.UID, "allowed": true}})
	}))
	t.Cleanup(svc.Close)
	return svc, release, blocked, seen
}

// gaugeValue is the value of family's series with label request_kind=kind
// (-1: no such series).
func gaugeValue(got map[string]*dto.MetricFamily, family, kind string) float64 {
	mf, ok := got[family]
	if !ok {
		return -1
	}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "request_kind" && l.GetValue() == kind {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

// TestCurrentInqueueRequests fills a one-queue priority level with
// creates held by a blocking admission webhook, so that the next one
// waits in API Priority and Fairness's queue, and checks that
// apiserver_current_inqueue_requests{request_kind="mutating"} shows it
// (the highest count of the last second, as upstream's watermark) and
// apiserver_current_inflight_requests the executing ones; both have a
// read-only series; the counts go back to 0 once the requests are done.
func TestCurrentInqueueRequests(t *testing.T) {
	svc, release, blocked, seen := blockingWebhook(t)
	released := sync.OnceFunc(func() { close(release) })
	t.Cleanup(released)
	srv := kapitest.Start(t, kapitest.WithFlags("--authorization-mode=AlwaysAllow"))
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(srv.Config)

	// Upstream publishes both kinds once a second from the start, at 0
	// while nothing waits.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := scrape(t, srv.Config)
		if mf, ok := got["apiserver_current_inqueue_requests"]; ok {
			checkFamily(t, mf, expectedFamily{Name: "apiserver_current_inqueue_requests", Type: "gauge", Labels: []string{"request_kind"}})
			if gaugeValue(got, "apiserver_current_inqueue_requests", "readOnly") != 0 || gaugeValue(got, "apiserver_current_inqueue_requests", "mutating") != 0 {
				t.Errorf("idle: got %v", mf.GetMetric())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("apiserver_current_inqueue_requests: missing")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A level of 3 seats (1 share of 246 of 600 seats, rounded up), no
	// lending or borrowing, one queue; its FlowSchema takes user
	// slow-writer's requests.
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "inqueue-test"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](1),
				LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 10}}}}}
	pl, err := admin.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, pl, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "inqueue-test"}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "inqueue-test"}, MatchingPrecedence: 100,
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "slow-writer"}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
				Namespaces: []string{"*"}, ClusterScope: true}},
		}},
	}}
	if _, err := admin.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	none := admissionregistrationv1.SideEffectClassNone
	if _, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "inqueue-test"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "block.inqueue.example.com",
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr.To[int32](30),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptrTo(svc.URL + "/validate"),
				CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: svc.Certificate().Raw})}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Wait until the webhook is called and slow-writer's requests are
	// classified into the new level.
	slowCfg := rest.CopyConfig(srv.Config)
	slowCfg.Impersonate = rest.ImpersonationConfig{UserName: "slow-writer"}
	slow := kubernetes.NewForConfigOrDie(slowCfg)
	for i := 0; seen.Load() == 0; i++ {
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatal("the webhook was never called")
		}
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", i), Labels: map[string]string{"probe": "yes"}}}
		if _, err := admin.CoreV1().ConfigMaps("default").Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		if priorityLevelUID(t, slowCfg) == string(pl.UID) {
			break
		}
		if time.Now().After(deadline.Add(40 * time.Second)) {
			t.Fatal("slow-writer's requests are not classified into inqueue-test")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Three creates take the level's three seats and hang in the webhook;
	// a fourth waits in the queue.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("slow-%d", i), Labels: map[string]string{"block": "yes"}}}
			if _, err := slow.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Errorf("create %s: %v", cm.Name, err)
			}
		})
	}
	sawQueued, sawExecuting := false, false
	for !sawQueued || !sawExecuting {
		if time.Now().After(deadline.Add(60 * time.Second)) {
			released()
			wg.Wait()
			t.Fatalf("never saw the waiting request (%v) or the 3 executing (%v); %d blocked in the webhook", sawQueued, sawExecuting, blocked.Load())
		}
		got := scrape(t, srv.Config)
		if gaugeValue(got, "apiserver_current_inqueue_requests", "mutating") >= 1 {
			sawQueued = true
		}
		if gaugeValue(got, "apiserver_current_inflight_requests", "mutating") >= 3 {
			sawExecuting = true
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := blocked.Load(); n != 3 {
		t.Errorf("%d creates reached the webhook while the fourth waited, want 3", n)
	}
	released()
	wg.Wait()
	if n := blocked.Load(); n != 4 {
		t.Errorf("%d creates reached the webhook, want 4", n)
	}
	// Nothing waits any more: a later period publishes 0.
	for {
		got := scrape(t, srv.Config)
		if gaugeValue(got, "apiserver_current_inqueue_requests", "mutating") == 0 {
			break
		}
		if time.Now().After(deadline.Add(70 * time.Second)) {
			t.Fatal("apiserver_current_inqueue_requests stayed above 0")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// priorityLevelUID returns the priority level UID header of a list by
// cfg's user.
func priorityLevelUID(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(cfg.Host + "/api/v1/namespaces/default/configmaps?limit=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID")
}
