package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
)

// netStorageBenchObjects is how many objects of each resource the list
// benchmark stores.
const netStorageBenchObjects = 10000

// netStorageBenchResource makes object i of a resource and lists them all.
type netStorageBenchResource struct {
	name   string
	create func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error
	list   func(ctx context.Context, cs kubernetes.Interface, ns string) (int, error)
}

var netStorageBenchResources = []netStorageBenchResource{
	{"ingresses", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("ing-", i)},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: fmt.Sprintf("h%d.example.com", i), IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}}}}},
		}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, ns string) (int, error) {
		l, err := cs.NetworkingV1().Ingresses(ns).List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"ingressclasses", func(ctx context.Context, cs kubernetes.Interface, _ string, i int) error {
		_, err := cs.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("ic-", i)}, Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress"}}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, _ string) (int, error) {
		l, err := cs.NetworkingV1().IngressClasses().List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"networkpolicies", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("np-", i)},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprint(i)}},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(80))}}}}},
		}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, ns string) (int, error) {
		l, err := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"ipaddresses", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.NetworkingV1().IPAddresses().Create(ctx, &networkingv1.IPAddress{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("10.200.%d.%d", i/256, i%256)},
			Spec:       networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: ns, Name: fmt.Sprint("svc-", i)}},
		}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, _ string) (int, error) {
		l, err := cs.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"servicecidrs", func(ctx context.Context, cs kubernetes.Interface, _ string, i int) error {
		_, err := cs.NetworkingV1().ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cidr-", i)},
			Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{fmt.Sprintf("10.%d.%d.0/24", 100+i/256, i%256)}},
		}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, _ string) (int, error) {
		l, err := cs.NetworkingV1().ServiceCIDRs().List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"storageclasses", func(ctx context.Context, cs kubernetes.Interface, _ string, i int) error {
		_, err := cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("sc-", i)}, Provisioner: "csi.example.com", Parameters: map[string]string{"type": "ssd"}}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, _ string) (int, error) {
		l, err := cs.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"csidrivers", func(ctx context.Context, cs kubernetes.Interface, _ string, i int) error {
		_, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d%d.csi.example.com", i)}}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, _ string) (int, error) {
		l, err := cs.StorageV1().CSIDrivers().List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"csinodes", func(ctx context.Context, cs kubernetes.Interface, _ string, i int) error {
		_, err := cs.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("node-", i)},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com", NodeID: fmt.Sprint("i-", i), TopologyKeys: []string{"topology.kubernetes.io/zone"}}}}}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, _ string) (int, error) {
		l, err := cs.StorageV1().CSINodes().List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"csistoragecapacities", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.StorageV1().CSIStorageCapacities(ns).Create(ctx, &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cap-", i)},
			StorageClassName: "fast", Capacity: ptr.To(resource.MustParse("10Gi")),
			NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{"topology.kubernetes.io/zone": fmt.Sprint("z", i)}}}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, ns string) (int, error) {
		l, err := cs.StorageV1().CSIStorageCapacities(ns).List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"volumeattachments", func(ctx context.Context, cs kubernetes.Interface, _ string, i int) error {
		_, err := cs.StorageV1().VolumeAttachments().Create(ctx, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("va-", i)},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: fmt.Sprint("node-", i%100), Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(fmt.Sprint("pv-", i))}}}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, _ string) (int, error) {
		l, err := cs.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"volumeattributesclasses", func(ctx context.Context, cs kubernetes.Interface, _ string, i int) error {
		_, err := cs.StorageV1().VolumeAttributesClasses().Create(ctx, &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("vac-", i)}, DriverName: "csi.example.com", Parameters: map[string]string{"iops": fmt.Sprint(i)}}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, _ string) (int, error) {
		l, err := cs.StorageV1().VolumeAttributesClasses().List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"priorityclasses", func(ctx context.Context, cs kubernetes.Interface, _ string, i int) error {
		_, err := cs.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("pc-", i)}, Value: int32(i), Description: "bench"}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, _ string) (int, error) {
		l, err := cs.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
	{"runtimeclasses", func(ctx context.Context, cs kubernetes.Interface, _ string, i int) error {
		_, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("rc-", i)}, Handler: "runsc",
			Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("120Mi")}}}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context, cs kubernetes.Interface, _ string) (int, error) {
		l, err := cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
		return lenOr(l, err, func() int { return len(l.Items) })
	}},
}

func lenOr(l any, err error, n func() int) (int, error) {
	if err != nil {
		return 0, err
	}
	return n(), nil
}

// BenchmarkListNetStorage10k measures a full list (what `kubectl get`
// does: no resourceVersion, a consistent read) of 10,000 objects of each
// resource of networking.k8s.io/v1, storage.k8s.io/v1, scheduling.k8s.io/v1
// and node.k8s.io/v1, through the whole stack (TLS, filters, client-go
// decoding), in JSON and in protobuf. Storing the objects is not timed.
//
//	go test -run '^$' -bench BenchmarkListNetStorage10k -benchtime 5x ./test/e2e/
func BenchmarkListNetStorage10k(b *testing.B) {
	for _, backend := range []struct {
		name string
		opts []kapitest.Option
	}{{"memory", nil}, {"etcd", []kapitest.Option{kapitest.WithEmbeddedEtcd()}}} {
		b.Run(backend.name, func(b *testing.B) {
			dir := b.TempDir()
			srv, err := kapitest.StartE(dir, slog.New(slog.NewTextHandler(io.Discard, nil)), backend.opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := srv.Stop(); err != nil {
					b.Error(err)
				}
				_ = os.RemoveAll(dir)
			}()
			cfg := *srv.Config
			cfg.QPS = -1
			cs := kubernetes.NewForConfigOrDie(&cfg)
			pcfg := cfg
			pcfg.ContentType = runtime.ContentTypeProtobuf
			pcfg.AcceptContentTypes = runtime.ContentTypeProtobuf
			pcs := kubernetes.NewForConfigOrDie(&pcfg)
			ns := "default"
			for _, r := range netStorageBenchResources {
				b.Run(r.name, func(b *testing.B) {
					fillNetStorage(b, cs, ns, r)
					for _, client := range []struct {
						name string
						cs   kubernetes.Interface
					}{{"json", cs}, {"protobuf", pcs}} {
						b.Run(client.name, func(b *testing.B) {
							for b.Loop() {
								n, err := r.list(context.Background(), client.cs, ns)
								if err != nil {
									b.Fatal(err)
								}
								// The system priority classes and the
								// default ServiceCIDR are listed too.
								if n < netStorageBenchObjects {
									b.Fatalf("listed %d %s", n, r.name)
								}
							}
							b.ReportMetric(float64(netStorageBenchObjects)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
						})
					}
				})
			}
		})
	}
}

// fillNetStorage stores the resource's objects once (20 writers).
func fillNetStorage(b *testing.B, cs kubernetes.Interface, ns string, r netStorageBenchResource) {
	b.Helper()
	n, err := r.list(context.Background(), cs, ns)
	if err != nil {
		b.Fatal(err)
	}
	if n >= netStorageBenchObjects {
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= netStorageBenchObjects {
					return
				}
				if err := r.create(context.Background(), cs, ns, i); err != nil {
					errs <- fmt.Errorf("create %s %d: %w", r.name, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
