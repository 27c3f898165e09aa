package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/service"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// The "kubernetes" Service: how in-cluster clients find the API server.
const (
	kubernetesServiceName = "kubernetes"
	kubernetesPortName    = "https"
	kubernetesServicePort = 443
	// skipMirrorLabel keeps the endpointslice mirroring controller away
	// from the Endpoints the control plane writes itself.
	skipMirrorLabel = discoveryv1.LabelSkipMirror
)

// Defaults of the Config fields of the "kubernetes" Service.
const (
	// DefaultSecurePort is the secure port advertised when Config.SecurePort
	// is 0 (kube-apiserver's --secure-port default).
	DefaultSecurePort = 6443
	// DefaultKubernetesServiceInterval is how often the bootstrap
	// controller reconciles the "kubernetes" Service and its endpoints.
	DefaultKubernetesServiceInterval = 10 * time.Second
	// DefaultAllocationRepairMinAge is how old a leaked ClusterIP or NodePort
	// allocation must be before the repair releases it (longer than any
	// write that holds an allocation it has not stored yet).
	DefaultAllocationRepairMinAge = 3 * time.Minute
)

// DefaultServiceClusterIPRange is --service-cluster-ip-range's default,
// as kube-apiserver: 10.0.0.0/24.
var DefaultServiceClusterIPRange = netip.MustParsePrefix("10.0.0.0/24")

// DefaultPublicAddress is the address the "kubernetes" endpoints point at
// when Config.PublicAddress is nil (kapi binds loopback by default).
var DefaultPublicAddress = net.IPv4(127, 0, 0, 1)

// serviceStores are what the bootstrap controller works on: the services,
// endpoints and endpointslices lines' storage, the services' allocators,
// and the API server leases.
type serviceStores struct {
	services   *service.REST
	endpoints  *generic.Store
	slices     *generic.Store
	allocators service.Allocators
	// apiserverLeases holds one Lease per API server address (kube's
	// "master leases"): the "kubernetes" endpoints list the addresses
	// whose lease is live.
	apiserverLeases storage.Interface
}

// serviceStorage is the services line: the resource and its status
// subresource, which allocate ClusterIPs and NodePorts (see
// serviceAllocators) and keep the endpoints line's Endpoints in step.
func serviceStorage(b *storageBuilder) (resourceStorage, error) {
	eps, err := storageAs[*generic.Store](b, endpointsResource)
	if err != nil {
		return resourceStorage{}, err
	}
	allocators, err := b.serviceAllocators()
	if err != nil {
		return resourceStorage{}, err
	}
	svcs, status, err := service.NewREST(b.opts, service.Config{Allocators: allocators, Endpoints: eps})
	if err != nil {
		return resourceStorage{}, err
	}
	proxy, err := serviceProxy(b, svcs, eps)
	if err != nil {
		svcs.Destroy()
		return resourceStorage{}, err
	}
	return resourceStorage{storage: svcs, subresources: map[string]rest.Storage{"status": status, "proxy": proxy}}, nil
}

// serviceProxy makes services/proxy: it reads the EndpointSlices and pods
// lines when the tables have them (without them no endpoint is usable).
func serviceProxy(b *storageBuilder, svcs *service.REST, eps *generic.Store) (*service.ProxyREST, error) {
	var slices service.EndpointSliceLister
	if hasLine(b, endpointSlicesResource) {
		st, err := storageAs[*generic.Store](b, endpointSlicesResource)
		if err != nil {
			return nil, err
		}
		slices = service.NewReader(svcs, eps, st)
	}
	var pods rest.Getter
	if gvr := corev1.SchemeGroupVersion.WithResource("pods"); hasLine(b, gvr) {
		rs, err := b.storage(gvr)
		if err != nil {
			return nil, err
		}
		getter, ok := rs.storage.(rest.Getter)
		if !ok {
			return nil, fmt.Errorf("controlplane: the storage of %s is a %T, not a getter", gvr, rs.storage)
		}
		pods = getter
	}
	return service.NewProxyREST(svcs, slices, pods), nil
}

// serviceAllocators makes (once) the ClusterIP allocator of
// Config.ServiceClusterIPRange and the ServiceCIDRs, which writes
// IPAddress objects through the ipaddresses line's storage, and the
// NodePort allocator of Config.ServiceNodePortRange, on lease storage b
// releases.
func (b *storageBuilder) serviceAllocators() (service.Allocators, error) {
	if b.allocators != nil {
		return *b.allocators, nil
	}
	var out service.Allocators
	ipCfg, err := b.ipAllocatorConfig()
	if err != nil {
		return out, fmt.Errorf("service IP allocations: %w", err)
	}
	ipCfg.Metrics = b.config.AllocatorMetrics
	if out.IPs, err = allocator.NewIPs(ipCfg); err != nil {
		return out, err
	}
	portStorage, err := b.leaseStorage("servicenodeportallocations", allocator.PortKeyPrefix)
	if err != nil {
		return out, fmt.Errorf("service node port allocations: %w", err)
	}
	if out.Ports, err = allocator.NewPorts(portStorage, b.config.ServiceNodePortRange); err != nil {
		return out, err
	}
	out.Ports.SetMetrics(b.config.AllocatorMetrics)
	b.allocators = &out
	return out, nil
}

// ipAllocatorConfig returns where the ClusterIP allocator keeps its
// IPAddresses (the ipaddresses line's storage, or storage at its key
// prefix when networking.k8s.io/v1 is not served) and reads the
// ServiceCIDRs (the servicecidrs line's, if served).
func (b *storageBuilder) ipAllocatorConfig() (allocator.IPConfig, error) {
	cfg := allocator.IPConfig{Default: b.config.ServiceClusterIPRange}
	if _, ok := b.lines[ipAddressesResource]; ok {
		st, err := storageAs[*generic.Store](b, ipAddressesResource)
		if err != nil {
			return cfg, err
		}
		cfg.Addresses, cfg.AddressPrefix = st.Storage, st.KeyPrefix
	} else {
		gr := ipAddressesResource.GroupResource()
		cfg.AddressPrefix = generic.DefaultResourcePrefix(gr)
		st, err := b.newStorage(generic.StorageConfig{
			Resource:       gr,
			StorageVersion: networkingv1.SchemeGroupVersion,
			Prefix:         cfg.AddressPrefix,
			NewFunc:        func() runtime.Object { return &networkingv1.IPAddress{} },
			NewListFunc:    func() runtime.Object { return &networkingv1.IPAddressList{} },
			GetAttrs:       storage.DefaultAttrs,
		})
		if err != nil {
			return cfg, err
		}
		cfg.Addresses = st
	}
	if _, ok := b.lines[serviceCIDRsResource]; ok {
		st, err := storageAs[*generic.Store](b, serviceCIDRsResource)
		if err != nil {
			return cfg, err
		}
		cfg.CIDRs, cfg.CIDRPrefix = st.Storage, st.KeyPrefix
	}
	return cfg, nil
}

// leaseStorage makes storage of coordination/v1 Leases at prefix, outside
// the tables (allocations, API server leases). It is internal storage
// (generic.StorageConfig.Internal): kube-apiserver keeps this data in
// plain etcd storage (serviceallocator's, the lease reconciler's), with
// no watch cache or registry, so its only series are the etcd request
// families under resource (kube-apiserver's names: see the callers);
// kapi's watch cache in front (which its controllers read) reports none.
func (b *storageBuilder) leaseStorage(resource, prefix string) (storage.Interface, error) {
	return b.newStorage(generic.StorageConfig{
		Resource:       corev1.Resource(resource),
		StorageVersion: coordinationv1.SchemeGroupVersion,
		Prefix:         prefix,
		NewFunc:        func() runtime.Object { return &coordinationv1.Lease{} },
		NewListFunc:    func() runtime.Object { return &coordinationv1.LeaseList{} },
		GetAttrs:       storage.DefaultAttrs,
		Internal:       true,
	})
}

// servicesOf returns the services, endpoints and endpointslices resources
// (made if need be) and their allocators, and makes the API server leases'
// storage.
func servicesOf(b *storageBuilder) (out serviceStores, err error) {
	if out.services, err = storageAs[*service.REST](b, servicesResource); err != nil {
		return out, err
	}
	if out.endpoints, err = storageAs[*generic.Store](b, endpointsResource); err != nil {
		return out, err
	}
	if out.slices, err = storageAs[*generic.Store](b, endpointSlicesResource); err != nil {
		return out, err
	}
	if out.allocators, err = b.serviceAllocators(); err != nil {
		return out, err
	}
	// "apiServerIPInfo": the resource kube-apiserver's lease endpoint
	// reconciler (its default) names its /masterleases storage, seen in
	// its etcd_request_* series.
	if out.apiserverLeases, err = b.leaseStorage("apiServerIPInfo", apiserverLeasePrefix); err != nil {
		return out, fmt.Errorf("API server leases: %w", err)
	}
	return out, nil
}

// addBootstrapController adds the "bootstrap-controller" post-start hook
// (kube's name): it runs the [kubernetesService] controller until the
// server stops, and returns once the first reconcile has run.
func addBootstrapController(s *server.GenericServer, c Config, svcs serviceStores) error {
	k := &kubernetesService{
		services:  svcs.services,
		endpoints: svcs.endpoints,
		slices:    svcs.slices,
		leases:    svcs.apiserverLeases,
		clusterIP: svcs.allocators.IPs.First(),
		address:   c.PublicAddress,
		port:      int32(c.SecurePort),
		interval:  c.KubernetesServiceInterval,
		leaseTTL:  leaseTTL(c.KubernetesServiceInterval),
		repairAge: c.AllocationRepairMinAge,
		logger:    c.Logger.With("controller", "bootstrap"),
	}
	done := make(chan struct{})
	var started atomic.Bool
	if err := s.AddPostStartHook("bootstrap-controller", func(ctx context.Context) error {
		started.Store(true)
		first := make(chan struct{})
		go func() {
			defer close(done)
			k.run(ctx, first) // ends when the HTTP server is told to stop
		}()
		select {
		case <-first:
		case <-ctx.Done():
		}
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

// kubernetesService is the bootstrap controller: it keeps the "kubernetes"
// Service in namespace default (ClusterIP the first address of the range,
// port 443 "https" to the secure port) and its Endpoints and EndpointSlice,
// and repairs the ClusterIP and NodePort allocations. It runs from the
// "bootstrap-controller" post-start hook until the server stops.
//
// The endpoints are kube's "lease" endpoint reconciler's: each API server
// sharing the storage renews a lease on its public address every period
// (valid leaseTTL), and the endpoints list the addresses with a live lease
// (each on this server's secure port, as kube assumes all servers share
// one). A server that stops removes its lease and its address.
type kubernetesService struct {
	services  *service.REST
	endpoints *generic.Store
	slices    *generic.Store
	leases    storage.Interface
	clusterIP netip.Addr
	address   net.IP
	port      int32
	interval  time.Duration
	leaseTTL  time.Duration
	repairAge time.Duration
	logger    *slog.Logger
}

// apiserverLeasePrefix is where each API server's address lease lives.
const apiserverLeasePrefix = "/masterleases"

// leaseTTL is how long an API server's address stays in the endpoints
// without being renewed: kube's 15s, and at least one and a half
// reconcile periods.
func leaseTTL(interval time.Duration) time.Duration {
	return max(15*time.Second, interval*3/2)
}

// run reconciles at once, closes first (the hook waits for it), then every
// interval until ctx is done.
func (k *kubernetesService) run(ctx context.Context, first chan<- struct{}) {
	k.reconcileAll(ctx)
	close(first)
	t := time.NewTicker(k.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			k.removeAddress(context.WithoutCancel(ctx))
			return
		case <-t.C:
			k.reconcileAll(ctx)
		}
	}
}

// removeAddress withdraws this server from the "kubernetes" endpoints when
// it stops: its lease goes, and the endpoints list the other live servers
// (if there is none, they are left as they are, as kube does).
func (k *kubernetesService) removeAddress(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	key := apiserverLeasePrefix + "/" + k.address.String()
	if err := k.leases.Delete(ctx, key, &coordinationv1.Lease{}, nil, nil, nil); err != nil && !storage.IsNotFound(err) {
		k.logger.Error("remove the API server lease", "err", err)
		return
	}
	addrs, err := k.liveAddresses(ctx)
	if err != nil || len(addrs) == 0 {
		return
	}
	if err := k.writeEndpoints(ctx, addrs); err != nil {
		k.logger.Error("remove this server from the kubernetes endpoints", "err", err)
	}
}

// renewLease records that this server serves at its address, for
// leaseTTL.
func (k *kubernetesService) renewLease(ctx context.Context) error {
	ip := k.address.String()
	key := apiserverLeasePrefix + "/" + ip
	ttl := int32(k.leaseTTL / time.Second)
	err := k.leases.GuaranteedUpdate(ctx, key, &coordinationv1.Lease{}, true, nil, func(in runtime.Object) (runtime.Object, error) {
		l := in.(*coordinationv1.Lease).DeepCopy()
		if l.UID == "" {
			l.Name = ip
			l.UID = uuid.NewUUID()
			l.CreationTimestamp = metav1.Now()
		}
		now := metav1.NowMicro()
		l.Spec.HolderIdentity = &ip
		l.Spec.LeaseDurationSeconds = &ttl
		l.Spec.RenewTime = &now
		return l, nil
	}, nil)
	if err != nil {
		return fmt.Errorf("renew %s: %w", key, err)
	}
	return nil
}

// liveAddresses returns the sorted addresses of the API servers whose
// lease has not expired.
func (k *kubernetesService) liveAddresses(ctx context.Context) ([]string, error) {
	var l coordinationv1.LeaseList
	if err := k.leases.GetList(ctx, apiserverLeasePrefix, storage.ListOptions{Recursive: true}, &l); err != nil {
		return nil, fmt.Errorf("list API server leases: %w", err)
	}
	now := time.Now()
	var out []string
	for _, lease := range l.Items {
		s := lease.Spec
		if s.RenewTime == nil || s.LeaseDurationSeconds == nil || net.ParseIP(lease.Name) == nil {
			continue
		}
		if s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second).After(now) {
			out = append(out, lease.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (k *kubernetesService) reconcileAll(ctx context.Context) {
	if err := k.reconcile(ctx); err != nil && ctx.Err() == nil {
		k.logger.Error("reconcile the kubernetes service", "err", err)
	}
	if res, err := k.services.Repair(ctx, k.repairAge); err != nil && ctx.Err() == nil {
		k.logger.Error("repair service allocations", "err", err)
	} else if res.Released+res.Restored > 0 {
		k.logger.Info("repaired service allocations", "released", res.Released, "restored", res.Restored)
	}
}

// reconcile makes the Service, Endpoints and EndpointSlice what they
// should be.
func (k *kubernetesService) reconcile(ctx context.Context) error {
	if err := k.reconcileService(ctx); err != nil {
		return err
	}
	if err := k.renewLease(ctx); err != nil {
		return err
	}
	addrs, err := k.liveAddresses(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(addrs, k.address.String()) {
		addrs = append(addrs, k.address.String())
		slices.Sort(addrs)
	}
	return k.writeEndpoints(ctx, addrs)
}

// writeEndpoints makes the Endpoints and EndpointSlice list addrs.
func (k *kubernetesService) writeEndpoints(ctx context.Context, addrs []string) error {
	if err := k.reconcileEndpoints(ctx, addrs); err != nil {
		return err
	}
	return k.reconcileSlice(ctx, addrs)
}

func (k *kubernetesService) desiredService() *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      kubernetesServiceName,
			Namespace: metav1.NamespaceDefault,
			Labels:    map[string]string{"component": "apiserver", "provider": "kubernetes"},
		},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: k.clusterIP.String(),
			Ports: []corev1.ServicePort{{
				Name:       kubernetesPortName,
				Protocol:   corev1.ProtocolTCP,
				Port:       kubernetesServicePort,
				TargetPort: intstr.FromInt32(k.port),
			}},
			SessionAffinity: corev1.ServiceAffinityNone,
			IPFamilyPolicy:  new(corev1.IPFamilyPolicy),
		},
	}
	// SingleStack, as upstream's bootstrap controller asks.
	*svc.Spec.IPFamilyPolicy = corev1.IPFamilyPolicySingleStack
	return svc
}

// serviceKind is the kind of the services resource.
var serviceKind = corev1.SchemeGroupVersion.WithKind("Service")

// reconcileService creates the Service when it is missing. As
// kube-apiserver's controller (its loop calls
// UpdateKubernetesService(false)), an existing Service is left as it is:
// ports, type or labels a client changed stay.
func (k *kubernetesService) reconcileService(ctx context.Context) error {
	sctx := systemContext(ctx, metav1.NamespaceDefault)
	_, err := k.services.Get(sctx, kubernetesServiceName, &metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get service %s: %w", kubernetesServiceName, err)
	}
	// Defaulted as the request body of upstream's create through its
	// loopback client is, and recorded as kube-apiserver's write.
	want := k.desiredService()
	scheme.Scheme.Default(want)
	rec, err := createdAsAPIServer(k.services, serviceKind, want)
	if err != nil {
		return err
	}
	if _, err := k.services.Create(sctx, rec, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service %s: %w", kubernetesServiceName, err)
	}
	k.logger.Info("created the kubernetes service", "clusterIP", k.clusterIP)
	return nil
}

func (k *kubernetesService) desiredEndpoints(addrs []string) *corev1.Endpoints {
	eps := make([]corev1.EndpointAddress, len(addrs))
	for i, a := range addrs {
		eps[i] = corev1.EndpointAddress{IP: a}
	}
	return &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{
			Name:      kubernetesServiceName,
			Namespace: metav1.NamespaceDefault,
			Labels:    map[string]string{skipMirrorLabel: "true"},
		},
		Subsets: []corev1.EndpointSubset{{
			Addresses: eps,
			Ports:     []corev1.EndpointPort{{Name: kubernetesPortName, Port: k.port, Protocol: corev1.ProtocolTCP}},
		}},
	}
}

func (k *kubernetesService) addressType() discoveryv1.AddressType {
	if k.address.To4() == nil {
		return discoveryv1.AddressTypeIPv6
	}
	return discoveryv1.AddressTypeIPv4
}

func (k *kubernetesService) desiredSlice(addrs []string) *discoveryv1.EndpointSlice {
	name, proto, port, ready := kubernetesPortName, corev1.ProtocolTCP, k.port, true
	// A slice holds one address family: ours.
	var eps []discoveryv1.Endpoint
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil && (ip.To4() == nil) == (k.address.To4() == nil) {
			eps = append(eps, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
		}
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      kubernetesServiceName,
			Namespace: metav1.NamespaceDefault,
			Labels:    map[string]string{discoveryv1.LabelServiceName: kubernetesServiceName},
		},
		AddressType: k.addressType(),
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Protocol: &proto, Port: &port}},
	}
}

// reconcileEndpoints writes the Endpoints if they are missing or differ.
// They are written to storage directly: kube's validation refuses
// loopback endpoint addresses, and kapi advertises 127.0.0.1 by default.
func (k *kubernetesService) reconcileEndpoints(ctx context.Context, addrs []string) error {
	want := k.desiredEndpoints(addrs)
	return k.writeDirect(ctx, k.endpoints, want, func(cur runtime.Object) bool {
		ep := cur.(*corev1.Endpoints)
		return equality.Semantic.DeepEqual(ep.Subsets, want.Subsets) && ep.Labels[skipMirrorLabel] == "true"
	}, func(cur runtime.Object) runtime.Object {
		ep := cur.(*corev1.Endpoints).DeepCopy()
		ep.Subsets = want.Subsets
		if ep.Labels == nil {
			ep.Labels = map[string]string{}
		}
		ep.Labels[skipMirrorLabel] = "true"
		return ep
	})
}

// reconcileSlice writes the EndpointSlice if it is missing or differs
// (directly to storage, as the Endpoints).
func (k *kubernetesService) reconcileSlice(ctx context.Context, addrs []string) error {
	want := k.desiredSlice(addrs)
	return k.writeDirect(ctx, k.slices, want, func(cur runtime.Object) bool {
		s := cur.(*discoveryv1.EndpointSlice)
		return s.AddressType == want.AddressType && equality.Semantic.DeepEqual(s.Endpoints, want.Endpoints) &&
			equality.Semantic.DeepEqual(s.Ports, want.Ports) && s.Labels[discoveryv1.LabelServiceName] == kubernetesServiceName
	}, func(cur runtime.Object) runtime.Object {
		s := cur.(*discoveryv1.EndpointSlice).DeepCopy()
		if s.AddressType != want.AddressType {
			// addressType is immutable: replace the slice.
			return nil
		}
		s.Endpoints, s.Ports = want.Endpoints, want.Ports
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[discoveryv1.LabelServiceName] = kubernetesServiceName
		s.Generation++
		return s
	})
}

// writeDirect creates want in store's storage if it is missing, or, if
// ok(current) is false, replaces it with fix(current) (a nil fix result
// deletes and re-creates it).
func (k *kubernetesService) writeDirect(ctx context.Context, store *generic.Store, want runtime.Object,
	ok func(runtime.Object) bool, fix func(runtime.Object) runtime.Object) error {
	key, err := store.KeyFunc(systemContext(ctx, metav1.NamespaceDefault), kubernetesServiceName)
	if err != nil {
		return err
	}
	cur := store.NewFunc()
	err = store.Storage.Get(ctx, key, storage.GetOptions{}, cur)
	switch {
	case storage.IsNotFound(err):
		return k.createDirect(ctx, store, key, want)
	case err != nil:
		return fmt.Errorf("get %s: %w", key, err)
	case ok(cur):
		return nil
	}
	if fix(cur) == nil {
		if err := store.Storage.Delete(ctx, key, store.NewFunc(), nil, nil, nil); err != nil && !storage.IsNotFound(err) {
			return fmt.Errorf("delete %s: %w", key, err)
		}
		return k.createDirect(ctx, store, key, want)
	}
	err = store.Storage.GuaranteedUpdate(ctx, key, store.NewFunc(), false, nil, func(in runtime.Object) (runtime.Object, error) {
		if ok(in) {
			return in, nil
		}
		out := fix(in)
		if out == nil {
			return nil, fmt.Errorf("%s changed address type meanwhile", key)
		}
		return out, nil
	}, nil)
	if err != nil {
		return fmt.Errorf("update %s: %w", key, err)
	}
	k.logger.Info("reconciled kubernetes endpoints", "resource", store.DefaultQualifiedResource.String())
	return nil
}

func (k *kubernetesService) createDirect(ctx context.Context, store *generic.Store, key string, want runtime.Object) error {
	obj := want.DeepCopyObject()
	m := obj.(metav1.Object)
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.Now())
	if _, isSlice := obj.(*discoveryv1.EndpointSlice); isSlice {
		m.SetGeneration(1)
	}
	if err := store.Storage.Create(ctx, key, obj, nil); err != nil && !storage.IsExists(err) {
		return fmt.Errorf("create %s: %w", key, err)
	}
	return nil
}

func hasLine(b *storageBuilder, gvr schema.GroupVersionResource) bool {
	_, ok := b.lines[gvr]
	return ok
}
