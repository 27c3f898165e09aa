package configcontroller_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/configcontroller"
)

// TestManagedFieldsAsUpstream checks the managed fields of the bootstrap
// configuration against kube-apiserver v1.37.2's (`kubectl get flowschema
// exempt -o json --show-managed-fields`, and the same for the
// prioritylevelconfiguration): the producer's Update of the object, and
// the consumer's forced Apply of the Dangling condition on status.
func TestManagedFieldsAsUpstream(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	entries := func(mf []metav1.ManagedFieldsEntry) map[string]string {
		out := map[string]string{}
		for _, m := range mf {
			fields := ""
			if m.FieldsV1 != nil {
				fields = string(m.FieldsV1.Raw)
			}
			out[m.Manager+" "+string(m.Operation)+" "+m.Subresource] = fields
		}
		return out
	}
	wantFS := map[string]string{
		configcontroller.ProducerFieldManager + " Update ": `{"f:metadata":{"f:annotations":{".":{},"f:apf.kubernetes.io/autoupdate-spec":{}}},"f:spec":{"f:matchingPrecedence":{},"f:priorityLevelConfiguration":{"f:name":{}},"f:rules":{}}}`,
		configcontroller.FieldManager + " Apply status":    `{"f:status":{"f:conditions":{"k:{\"type\":\"Dangling\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`,
	}
	var got map[string]string
	for deadline := time.Now().Add(30 * time.Second); ; {
		fs, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, "exempt", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got = entries(fs.ManagedFields); len(fs.Status.Conditions) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(got) != len(wantFS) {
		t.Errorf("flowschema exempt: managed fields %v, want %v", got, wantFS)
	}
	for k, v := range wantFS {
		if got[k] != v {
			t.Errorf("flowschema exempt, %s: got %q, want %q", k, got[k], v)
		}
	}

	pl, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, "exempt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantPL := map[string]string{
		configcontroller.ProducerFieldManager + " Update ": `{"f:metadata":{"f:annotations":{".":{},"f:apf.kubernetes.io/autoupdate-spec":{}}},"f:spec":{"f:exempt":{".":{},"f:lendablePercent":{},"f:nominalConcurrencyShares":{}},"f:type":{}}}`,
	}
	if got := entries(pl.ManagedFields); len(got) != 1 || got[configcontroller.ProducerFieldManager+" Update "] != wantPL[configcontroller.ProducerFieldManager+" Update "] {
		t.Errorf("prioritylevelconfiguration exempt: managed fields %v, want %v", got, wantPL)
	}
}
