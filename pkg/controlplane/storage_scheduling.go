package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/priorityclass"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/scheduling"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
)

// schedulingGroup is the table of scheduling.k8s.io: PriorityClasses, v1
// only.
var schedulingGroup = apiGroup{name: schedulingv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "priorityclasses", storage: func(b *storageBuilder) (resourceStorage, error) {
			st, err := priorityclass.NewREST(b.opts)
			if err != nil {
				return resourceStorage{}, err
			}
			return resourceStorage{storage: st}, nil
		}},
	},
}}}

var priorityClassesResource = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")

// addSystemPriorityClasses adds the post-start hook that creates the
// system priority classes (system-node-critical, system-cluster-critical)
// that are missing, at every start, as kube-apiserver's
// "scheduling/bootstrap-system-priority-classes" hook does. Without a
// priorityclasses line there is nothing to do.
func addSystemPriorityClasses(s *server.GenericServer, b *storageBuilder, logger *slog.Logger) error {
	if _, ok := b.lines[priorityClassesResource]; !ok {
		return nil
	}
	pcs, err := storageAs[*priorityclass.REST](b, priorityClassesResource)
	if err != nil {
		return err
	}
	return s.AddPostStartHook("scheduling/bootstrap-system-priority-classes", func(ctx context.Context) error {
		return bootstrapPriorityClasses(ctx, pcs, logger)
	})
}

// bootstrapPriorityClasses creates each missing system class, retrying a
// failed write for about 30 seconds (upstream polls for 30s too). An
// existing class is left as it is.
func bootstrapPriorityClasses(ctx context.Context, pcs *priorityclass.REST, logger *slog.Logger) error {
	sctx := systemContext(ctx, "")
	for _, pc := range scheduling.SystemPriorityClasses() {
		// Defaulted as a client's request body is (preemptionPolicy).
		scheme.Scheme.Default(pc)
		// Recorded as kube-apiserver's write, as the reference's hook
		// writes through its loopback client.
		want, err := createdAsAPIServer(pcs, schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"), pc)
		if err != nil {
			return err
		}
		for attempt := 0; ; attempt++ {
			_, err := pcs.Get(sctx, pc.Name, &metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				_, err = pcs.Create(sctx, want.DeepCopyObject(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
				if err == nil {
					logger.Info("created system priority class", "name", pc.Name, "value", pc.Value)
				}
				if apierrors.IsAlreadyExists(err) {
					err = nil
				}
			}
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if attempt >= 300 {
				return fmt.Errorf("create system priority class %s: %w", pc.Name, err)
			}
			logger.Warn("creating system priority class failed, retrying", "name", pc.Name, "err", err)
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}
