package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/ingress"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/ingressclass"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/ipaddress"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/networkpolicy"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/servicecidr"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
)

// networkingGroup is the table of networking.k8s.io: v1 only (the v1beta1
// IPAddress and ServiceCIDR are off by default in kube-apiserver v1.37).
var networkingGroup = apiGroup{name: networkingv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "networkpolicies", storage: storeOf(networkpolicy.NewREST)},
		{name: "ingresses", storage: storeAndStatus(ingress.NewREST)},
		{name: "ingressclasses", storage: storeOf(ingressclass.NewREST)},
		{name: "ipaddresses", storage: storeOf(ipaddress.NewREST)},
		{name: "servicecidrs", storage: storeAndStatus(servicecidr.NewREST)},
	},
}}}

var (
	serviceCIDRsResource = networkingv1.SchemeGroupVersion.WithResource("servicecidrs")
	ipAddressesResource  = networkingv1.SchemeGroupVersion.WithResource("ipaddresses")
)

// DefaultServiceCIDRName is the name of the ServiceCIDR of the
// --service-cluster-ip-range.
const DefaultServiceCIDRName = "kubernetes"

// defaultServiceCIDRReadyMessage is the message of its Ready condition
// (upstream's default-servicecidr controller).
const defaultServiceCIDRReadyMessage = "Kubernetes default Service CIDR is ready"

// addDefaultServiceCIDR adds the post-start hook that runs the default
// ServiceCIDR controller, as kube-apiserver's
// "start-kubernetes-service-cidr-controller" hook
// (pkg/controlplane/controller/defaultservicecidr): it creates the
// "kubernetes" ServiceCIDR of the service range when missing (at start
// and, if it is deleted, at the next sync), and sets its Ready condition
// to True when no Ready condition says otherwise and its CIDRs are this
// server's. A ServiceCIDR whose CIDRs differ is left alone (upstream
// records an event). It syncs every KubernetesServiceInterval until the
// server stops.
func addDefaultServiceCIDR(s *server.GenericServer, c Config, b *storageBuilder) error {
	if _, ok := b.lines[serviceCIDRsResource]; !ok {
		return nil
	}
	st, err := storageAs[*generic.Store](b, serviceCIDRsResource)
	if err != nil {
		return err
	}
	status, err := subresourceAs[*generic.StatusREST](b, serviceCIDRsResource, "status")
	if err != nil {
		return err
	}
	statusFields, err := fieldmanager.New(fieldmanager.Config{Kind: serviceCIDRKind, Subresource: "status", ResetFields: status.GetResetFields()})
	if err != nil {
		return fmt.Errorf("servicecidrs/status field manager: %w", err)
	}
	ctrl := &defaultServiceCIDR{
		store:        st,
		status:       status,
		statusFields: statusFields,
		cidrs:        []string{c.ServiceClusterIPRange.Masked().String()},
		logger:       c.Logger.With("controller", "kubernetes-service-cidr"),
	}
	// The servicecidrs controller (finalizer, Ready) runs in the same
	// goroutine when ipaddresses are served too.
	var cidrCtrl *serviceCIDRs
	if _, ok := b.lines[ipAddressesResource]; ok {
		ips, err := storageAs[*generic.Store](b, ipAddressesResource)
		if err != nil {
			return err
		}
		cidrCtrl = &serviceCIDRs{store: st, status: status, ips: ips, grace: serviceCIDRDeletionGrace,
			logger: c.Logger.With("controller", "service-cidrs")}
	}
	done := make(chan struct{})
	var started atomic.Bool
	if err := s.AddPostStartHook("start-kubernetes-service-cidr-controller", func(ctx context.Context) error {
		started.Store(true)
		ctrl.sync(ctx)
		go func() {
			defer close(done)
			t := time.NewTicker(c.KubernetesServiceInterval)
			defer t.Stop()
			cidrTick := time.NewTicker(serviceCIDRSyncInterval)
			defer cidrTick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					ctrl.sync(ctx)
				case <-cidrTick.C:
					if cidrCtrl != nil {
						cidrCtrl.sync(ctx)
					}
				}
			}
		}()
		return nil
	}); err != nil {
		return err
	}
	s.AddDestroyFunc(func() {
		if started.Load() {
			<-done
		}
	})
	return nil
}

// defaultServiceCIDR keeps the "kubernetes" ServiceCIDR.
type defaultServiceCIDR struct {
	store  *generic.Store
	status *generic.StatusREST
	// statusFields is the field manager of servicecidrs/status, which
	// records the Ready condition as upstream's controller applies it.
	statusFields *fieldmanager.Manager
	cidrs        []string
	logger       *slog.Logger
}

// serviceCIDRKind is the kind of the servicecidrs resource.
var serviceCIDRKind = networkingv1.SchemeGroupVersion.WithKind("ServiceCIDR")

// serviceCIDRControllerManager is the field manager of the Ready condition
// (upstream's defaultservicecidr controllerName, its ApplyStatus's
// FieldManager).
const serviceCIDRControllerManager = "kubernetes-service-cidr-controller"

// sync creates the ServiceCIDR if missing, then marks it Ready.
func (d *defaultServiceCIDR) sync(ctx context.Context) {
	sctx := systemContext(ctx, "")
	obj, err := d.store.Get(sctx, DefaultServiceCIDRName, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Recorded as kube-apiserver's write: upstream's controller
		// creates it through the loopback client.
		var rec runtime.Object
		rec, err = createdAsAPIServer(d.store, serviceCIDRKind, &networkingv1.ServiceCIDR{
			ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceCIDRName},
			Spec:       networkingv1.ServiceCIDRSpec{CIDRs: slices.Clone(d.cidrs)},
		})
		if err == nil {
			obj, err = d.store.Create(sctx, rec, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		}
		if err == nil {
			d.logger.Info("created the default ServiceCIDR", "cidrs", d.cidrs)
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			d.logger.Warn("default ServiceCIDR sync failed", "err", err)
		}
		return
	}
	sc := obj.(*networkingv1.ServiceCIDR)
	if !slices.Equal(sc.Spec.CIDRs, d.cidrs) {
		d.logger.Warn("the default ServiceCIDR does not match this server's service range", "have", sc.Spec.CIDRs, "want", d.cidrs)
		return
	}
	if cond := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady); cond != nil && cond.Status != metav1.ConditionUnknown {
		return
	}
	_, _, err = d.status.Update(sctx, DefaultServiceCIDRName, markReady{fields: d.statusFields}, rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil && ctx.Err() == nil {
		d.logger.Warn("setting the default ServiceCIDR Ready failed", "err", err)
	}
}

// markReady sets a ServiceCIDR's Ready condition to True (no reason, as
// upstream's controller applies it). With fields, it is upstream's
// server-side apply of the condition to the status, forced, by
// kubernetes-service-cidr-controller (an Apply entry of the status
// subresource in the managed fields).
type markReady struct {
	fields *fieldmanager.Manager
}

func (markReady) Preconditions() *metav1.Preconditions { return nil }

func (m markReady) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	sc, ok := old.(*networkingv1.ServiceCIDR)
	if !ok {
		return nil, apierrors.NewNotFound(networkingv1.Resource("servicecidrs"), DefaultServiceCIDRName)
	}
	if m.fields != nil {
		out, err := m.fields.Apply(old, readyApplyConfiguration(sc.Name), serviceCIDRControllerManager, true)
		if err != nil {
			return nil, fmt.Errorf("apply the Ready condition: %w", err)
		}
		return out, nil
	}
	sc = sc.DeepCopy()
	apimeta.SetStatusCondition(&sc.Status.Conditions, metav1.Condition{
		Type:    networkingv1.ServiceCIDRConditionReady,
		Status:  metav1.ConditionTrue,
		Message: defaultServiceCIDRReadyMessage,
	})
	return sc, nil
}

// readyApplyConfiguration is the configuration upstream's controller
// applies to the status of ServiceCIDR name: the Ready condition, True,
// with its message and the time now (no reason).
func readyApplyConfiguration(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": networkingv1.SchemeGroupVersion.String(),
		"kind":       serviceCIDRKind.Kind,
		"metadata":   map[string]any{"name": name},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type":               networkingv1.ServiceCIDRConditionReady,
			"status":             string(metav1.ConditionTrue),
			"message":            defaultServiceCIDRReadyMessage,
			"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
		}}},
	}}
}
