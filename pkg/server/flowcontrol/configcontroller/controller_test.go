package configcontroller_test

import (
	"context"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/configcontroller"
)

// After start the ensurer runs again periodically, as upstream's config
// producer does every minute: a deleted suggested schema comes back, an
// obsolete auto-updated one goes. The server's own controller ticks once a
// minute; a second controller with a short interval shows the loop.
func TestEnsureAgainPeriodically(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	fss := cs.FlowcontrolV1().FlowSchemas()
	if err := fss.Delete(ctx, "system-nodes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	obsolete := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "endpoint-controller", Annotations: map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-high"},
			MatchingPrecedence:         150,
		},
	}
	if _, err := fss.Create(ctx, obsolete, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ctrl := configcontroller.New(cs, flowcontrol.New(flowcontrol.Options{ServerConcurrencyLimit: 10}), nil)
	ctrl.EnsureInterval = 100 * time.Millisecond
	ctrl.Start(ctx)
	go ctrl.Run(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, errBack := fss.Get(ctx, "system-nodes", metav1.GetOptions{})
		_, errGone := fss.Get(ctx, "endpoint-controller", metav1.GetOptions{})
		if errBack == nil && apierrors.IsNotFound(errGone) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: system-nodes %v (want re-created), endpoint-controller %v (want removed)", errBack, errGone)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
