// Code generated from k8s.io/client-go@v0.37.2/kubernetes/clientset.go by
// hack/lazyclientset; DO NOT EDIT.

package lazy

import (
	"sync"

	admissionregistrationv1 "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/client-go/kubernetes/typed/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/client-go/kubernetes/typed/admissionregistration/v1beta1"
	internalv1alpha1 "k8s.io/client-go/kubernetes/typed/apiserverinternal/v1alpha1"
	appsv1 "k8s.io/client-go/kubernetes/typed/apps/v1"
	appsv1beta1 "k8s.io/client-go/kubernetes/typed/apps/v1beta1"
	appsv1beta2 "k8s.io/client-go/kubernetes/typed/apps/v1beta2"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authenticationv1alpha1 "k8s.io/client-go/kubernetes/typed/authentication/v1alpha1"
	authenticationv1beta1 "k8s.io/client-go/kubernetes/typed/authentication/v1beta1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	authorizationv1beta1 "k8s.io/client-go/kubernetes/typed/authorization/v1beta1"
	autoscalingv1 "k8s.io/client-go/kubernetes/typed/autoscaling/v1"
	autoscalingv2 "k8s.io/client-go/kubernetes/typed/autoscaling/v2"
	batchv1 "k8s.io/client-go/kubernetes/typed/batch/v1"
	batchv1beta1 "k8s.io/client-go/kubernetes/typed/batch/v1beta1"
	certificatesv1 "k8s.io/client-go/kubernetes/typed/certificates/v1"
	certificatesv1alpha1 "k8s.io/client-go/kubernetes/typed/certificates/v1alpha1"
	certificatesv1beta1 "k8s.io/client-go/kubernetes/typed/certificates/v1beta1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	coordinationv1alpha2 "k8s.io/client-go/kubernetes/typed/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/client-go/kubernetes/typed/coordination/v1beta1"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	discoveryv1 "k8s.io/client-go/kubernetes/typed/discovery/v1"
	discoveryv1beta1 "k8s.io/client-go/kubernetes/typed/discovery/v1beta1"
	eventsv1 "k8s.io/client-go/kubernetes/typed/events/v1"
	eventsv1beta1 "k8s.io/client-go/kubernetes/typed/events/v1beta1"
	extensionsv1beta1 "k8s.io/client-go/kubernetes/typed/extensions/v1beta1"
	flowcontrolv1 "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	flowcontrolv1beta1 "k8s.io/client-go/kubernetes/typed/flowcontrol/v1beta1"
	flowcontrolv1beta2 "k8s.io/client-go/kubernetes/typed/flowcontrol/v1beta2"
	flowcontrolv1beta3 "k8s.io/client-go/kubernetes/typed/flowcontrol/v1beta3"
	lifecyclev1alpha1 "k8s.io/client-go/kubernetes/typed/lifecycle/v1alpha1"
	networkingv1 "k8s.io/client-go/kubernetes/typed/networking/v1"
	networkingv1beta1 "k8s.io/client-go/kubernetes/typed/networking/v1beta1"
	nodev1 "k8s.io/client-go/kubernetes/typed/node/v1"
	nodev1alpha1 "k8s.io/client-go/kubernetes/typed/node/v1alpha1"
	nodev1beta1 "k8s.io/client-go/kubernetes/typed/node/v1beta1"
	policyv1 "k8s.io/client-go/kubernetes/typed/policy/v1"
	policyv1beta1 "k8s.io/client-go/kubernetes/typed/policy/v1beta1"
	rbacv1 "k8s.io/client-go/kubernetes/typed/rbac/v1"
	rbacv1alpha1 "k8s.io/client-go/kubernetes/typed/rbac/v1alpha1"
	rbacv1beta1 "k8s.io/client-go/kubernetes/typed/rbac/v1beta1"
	resourcev1 "k8s.io/client-go/kubernetes/typed/resource/v1"
	resourcev1alpha3 "k8s.io/client-go/kubernetes/typed/resource/v1alpha3"
	resourcev1beta1 "k8s.io/client-go/kubernetes/typed/resource/v1beta1"
	resourcev1beta2 "k8s.io/client-go/kubernetes/typed/resource/v1beta2"
	schedulingv1 "k8s.io/client-go/kubernetes/typed/scheduling/v1"
	schedulingv1alpha3 "k8s.io/client-go/kubernetes/typed/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/client-go/kubernetes/typed/scheduling/v1beta1"
	storagev1 "k8s.io/client-go/kubernetes/typed/storage/v1"
	storagev1alpha1 "k8s.io/client-go/kubernetes/typed/storage/v1alpha1"
	storagev1beta1 "k8s.io/client-go/kubernetes/typed/storage/v1beta1"
	storagemigrationv1 "k8s.io/client-go/kubernetes/typed/storagemigration/v1"
	storagemigrationv1beta1 "k8s.io/client-go/kubernetes/typed/storagemigration/v1beta1"
)

// groups holds each API group version's client, made on first use.
type groups struct {
	admissionregistrationV1Once       sync.Once
	admissionregistrationV1           *admissionregistrationv1.AdmissionregistrationV1Client
	admissionregistrationV1alpha1Once sync.Once
	admissionregistrationV1alpha1     *admissionregistrationv1alpha1.AdmissionregistrationV1alpha1Client
	admissionregistrationV1beta1Once  sync.Once
	admissionregistrationV1beta1      *admissionregistrationv1beta1.AdmissionregistrationV1beta1Client
	internalV1alpha1Once              sync.Once
	internalV1alpha1                  *internalv1alpha1.InternalV1alpha1Client
	appsV1Once                        sync.Once
	appsV1                            *appsv1.AppsV1Client
	appsV1beta1Once                   sync.Once
	appsV1beta1                       *appsv1beta1.AppsV1beta1Client
	appsV1beta2Once                   sync.Once
	appsV1beta2                       *appsv1beta2.AppsV1beta2Client
	authenticationV1Once              sync.Once
	authenticationV1                  *authenticationv1.AuthenticationV1Client
	authenticationV1alpha1Once        sync.Once
	authenticationV1alpha1            *authenticationv1alpha1.AuthenticationV1alpha1Client
	authenticationV1beta1Once         sync.Once
	authenticationV1beta1             *authenticationv1beta1.AuthenticationV1beta1Client
	authorizationV1Once               sync.Once
	authorizationV1                   *authorizationv1.AuthorizationV1Client
	authorizationV1beta1Once          sync.Once
	authorizationV1beta1              *authorizationv1beta1.AuthorizationV1beta1Client
	autoscalingV1Once                 sync.Once
	autoscalingV1                     *autoscalingv1.AutoscalingV1Client
	autoscalingV2Once                 sync.Once
	autoscalingV2                     *autoscalingv2.AutoscalingV2Client
	batchV1Once                       sync.Once
	batchV1                           *batchv1.BatchV1Client
	batchV1beta1Once                  sync.Once
	batchV1beta1                      *batchv1beta1.BatchV1beta1Client
	certificatesV1Once                sync.Once
	certificatesV1                    *certificatesv1.CertificatesV1Client
	certificatesV1beta1Once           sync.Once
	certificatesV1beta1               *certificatesv1beta1.CertificatesV1beta1Client
	certificatesV1alpha1Once          sync.Once
	certificatesV1alpha1              *certificatesv1alpha1.CertificatesV1alpha1Client
	coordinationV1alpha2Once          sync.Once
	coordinationV1alpha2              *coordinationv1alpha2.CoordinationV1alpha2Client
	coordinationV1beta1Once           sync.Once
	coordinationV1beta1               *coordinationv1beta1.CoordinationV1beta1Client
	coordinationV1Once                sync.Once
	coordinationV1                    *coordinationv1.CoordinationV1Client
	coreV1Once                        sync.Once
	coreV1                            *corev1.CoreV1Client
	discoveryV1Once                   sync.Once
	discoveryV1                       *discoveryv1.DiscoveryV1Client
	discoveryV1beta1Once              sync.Once
	discoveryV1beta1                  *discoveryv1beta1.DiscoveryV1beta1Client
	eventsV1Once                      sync.Once
	eventsV1                          *eventsv1.EventsV1Client
	eventsV1beta1Once                 sync.Once
	eventsV1beta1                     *eventsv1beta1.EventsV1beta1Client
	extensionsV1beta1Once             sync.Once
	extensionsV1beta1                 *extensionsv1beta1.ExtensionsV1beta1Client
	flowcontrolV1Once                 sync.Once
	flowcontrolV1                     *flowcontrolv1.FlowcontrolV1Client
	flowcontrolV1beta1Once            sync.Once
	flowcontrolV1beta1                *flowcontrolv1beta1.FlowcontrolV1beta1Client
	flowcontrolV1beta2Once            sync.Once
	flowcontrolV1beta2                *flowcontrolv1beta2.FlowcontrolV1beta2Client
	flowcontrolV1beta3Once            sync.Once
	flowcontrolV1beta3                *flowcontrolv1beta3.FlowcontrolV1beta3Client
	lifecycleV1alpha1Once             sync.Once
	lifecycleV1alpha1                 *lifecyclev1alpha1.LifecycleV1alpha1Client
	networkingV1Once                  sync.Once
	networkingV1                      *networkingv1.NetworkingV1Client
	networkingV1beta1Once             sync.Once
	networkingV1beta1                 *networkingv1beta1.NetworkingV1beta1Client
	nodeV1Once                        sync.Once
	nodeV1                            *nodev1.NodeV1Client
	nodeV1alpha1Once                  sync.Once
	nodeV1alpha1                      *nodev1alpha1.NodeV1alpha1Client
	nodeV1beta1Once                   sync.Once
	nodeV1beta1                       *nodev1beta1.NodeV1beta1Client
	policyV1Once                      sync.Once
	policyV1                          *policyv1.PolicyV1Client
	policyV1beta1Once                 sync.Once
	policyV1beta1                     *policyv1beta1.PolicyV1beta1Client
	rbacV1Once                        sync.Once
	rbacV1                            *rbacv1.RbacV1Client
	rbacV1beta1Once                   sync.Once
	rbacV1beta1                       *rbacv1beta1.RbacV1beta1Client
	rbacV1alpha1Once                  sync.Once
	rbacV1alpha1                      *rbacv1alpha1.RbacV1alpha1Client
	resourceV1Once                    sync.Once
	resourceV1                        *resourcev1.ResourceV1Client
	resourceV1beta2Once               sync.Once
	resourceV1beta2                   *resourcev1beta2.ResourceV1beta2Client
	resourceV1beta1Once               sync.Once
	resourceV1beta1                   *resourcev1beta1.ResourceV1beta1Client
	resourceV1alpha3Once              sync.Once
	resourceV1alpha3                  *resourcev1alpha3.ResourceV1alpha3Client
	schedulingV1alpha3Once            sync.Once
	schedulingV1alpha3                *schedulingv1alpha3.SchedulingV1alpha3Client
	schedulingV1beta1Once             sync.Once
	schedulingV1beta1                 *schedulingv1beta1.SchedulingV1beta1Client
	schedulingV1Once                  sync.Once
	schedulingV1                      *schedulingv1.SchedulingV1Client
	storageV1beta1Once                sync.Once
	storageV1beta1                    *storagev1beta1.StorageV1beta1Client
	storageV1Once                     sync.Once
	storageV1                         *storagev1.StorageV1Client
	storageV1alpha1Once               sync.Once
	storageV1alpha1                   *storagev1alpha1.StorageV1alpha1Client
	storagemigrationV1Once            sync.Once
	storagemigrationV1                *storagemigrationv1.StoragemigrationV1Client
	storagemigrationV1beta1Once       sync.Once
	storagemigrationV1beta1           *storagemigrationv1beta1.StoragemigrationV1beta1Client
}

// AdmissionregistrationV1 returns the AdmissionregistrationV1Client, made on the first call.
func (c *Clientset) AdmissionregistrationV1() admissionregistrationv1.AdmissionregistrationV1Interface {
	c.admissionregistrationV1Once.Do(func() { c.admissionregistrationV1 = must(c, admissionregistrationv1.NewForConfigAndClient) })
	return c.admissionregistrationV1
}

// AdmissionregistrationV1alpha1 returns the AdmissionregistrationV1alpha1Client, made on the first call.
func (c *Clientset) AdmissionregistrationV1alpha1() admissionregistrationv1alpha1.AdmissionregistrationV1alpha1Interface {
	c.admissionregistrationV1alpha1Once.Do(func() { c.admissionregistrationV1alpha1 = must(c, admissionregistrationv1alpha1.NewForConfigAndClient) })
	return c.admissionregistrationV1alpha1
}

// AdmissionregistrationV1beta1 returns the AdmissionregistrationV1beta1Client, made on the first call.
func (c *Clientset) AdmissionregistrationV1beta1() admissionregistrationv1beta1.AdmissionregistrationV1beta1Interface {
	c.admissionregistrationV1beta1Once.Do(func() { c.admissionregistrationV1beta1 = must(c, admissionregistrationv1beta1.NewForConfigAndClient) })
	return c.admissionregistrationV1beta1
}

// InternalV1alpha1 returns the InternalV1alpha1Client, made on the first call.
func (c *Clientset) InternalV1alpha1() internalv1alpha1.InternalV1alpha1Interface {
	c.internalV1alpha1Once.Do(func() { c.internalV1alpha1 = must(c, internalv1alpha1.NewForConfigAndClient) })
	return c.internalV1alpha1
}

// AppsV1 returns the AppsV1Client, made on the first call.
func (c *Clientset) AppsV1() appsv1.AppsV1Interface {
	c.appsV1Once.Do(func() { c.appsV1 = must(c, appsv1.NewForConfigAndClient) })
	return c.appsV1
}

// AppsV1beta1 returns the AppsV1beta1Client, made on the first call.
func (c *Clientset) AppsV1beta1() appsv1beta1.AppsV1beta1Interface {
	c.appsV1beta1Once.Do(func() { c.appsV1beta1 = must(c, appsv1beta1.NewForConfigAndClient) })
	return c.appsV1beta1
}

// AppsV1beta2 returns the AppsV1beta2Client, made on the first call.
func (c *Clientset) AppsV1beta2() appsv1beta2.AppsV1beta2Interface {
	c.appsV1beta2Once.Do(func() { c.appsV1beta2 = must(c, appsv1beta2.NewForConfigAndClient) })
	return c.appsV1beta2
}

// AuthenticationV1 returns the AuthenticationV1Client, made on the first call.
func (c *Clientset) AuthenticationV1() authenticationv1.AuthenticationV1Interface {
	c.authenticationV1Once.Do(func() { c.authenticationV1 = must(c, authenticationv1.NewForConfigAndClient) })
	return c.authenticationV1
}

// AuthenticationV1alpha1 returns the AuthenticationV1alpha1Client, made on the first call.
func (c *Clientset) AuthenticationV1alpha1() authenticationv1alpha1.AuthenticationV1alpha1Interface {
	c.authenticationV1alpha1Once.Do(func() { c.authenticationV1alpha1 = must(c, authenticationv1alpha1.NewForConfigAndClient) })
	return c.authenticationV1alpha1
}

// AuthenticationV1beta1 returns the AuthenticationV1beta1Client, made on the first call.
func (c *Clientset) AuthenticationV1beta1() authenticationv1beta1.AuthenticationV1beta1Interface {
	c.authenticationV1beta1Once.Do(func() { c.authenticationV1beta1 = must(c, authenticationv1beta1.NewForConfigAndClient) })
	return c.authenticationV1beta1
}

// AuthorizationV1 returns the AuthorizationV1Client, made on the first call.
func (c *Clientset) AuthorizationV1() authorizationv1.AuthorizationV1Interface {
	c.authorizationV1Once.Do(func() { c.authorizationV1 = must(c, authorizationv1.NewForConfigAndClient) })
	return c.authorizationV1
}

// AuthorizationV1beta1 returns the AuthorizationV1beta1Client, made on the first call.
func (c *Clientset) AuthorizationV1beta1() authorizationv1beta1.AuthorizationV1beta1Interface {
	c.authorizationV1beta1Once.Do(func() { c.authorizationV1beta1 = must(c, authorizationv1beta1.NewForConfigAndClient) })
	return c.authorizationV1beta1
}

// AutoscalingV1 returns the AutoscalingV1Client, made on the first call.
func (c *Clientset) AutoscalingV1() autoscalingv1.AutoscalingV1Interface {
	c.autoscalingV1Once.Do(func() { c.autoscalingV1 = must(c, autoscalingv1.NewForConfigAndClient) })
	return c.autoscalingV1
}

// AutoscalingV2 returns the AutoscalingV2Client, made on the first call.
func (c *Clientset) AutoscalingV2() autoscalingv2.AutoscalingV2Interface {
	c.autoscalingV2Once.Do(func() { c.autoscalingV2 = must(c, autoscalingv2.NewForConfigAndClient) })
	return c.autoscalingV2
}

// BatchV1 returns the BatchV1Client, made on the first call.
func (c *Clientset) BatchV1() batchv1.BatchV1Interface {
	c.batchV1Once.Do(func() { c.batchV1 = must(c, batchv1.NewForConfigAndClient) })
	return c.batchV1
}

// BatchV1beta1 returns the BatchV1beta1Client, made on the first call.
func (c *Clientset) BatchV1beta1() batchv1beta1.BatchV1beta1Interface {
	c.batchV1beta1Once.Do(func() { c.batchV1beta1 = must(c, batchv1beta1.NewForConfigAndClient) })
	return c.batchV1beta1
}

// CertificatesV1 returns the CertificatesV1Client, made on the first call.
func (c *Clientset) CertificatesV1() certificatesv1.CertificatesV1Interface {
	c.certificatesV1Once.Do(func() { c.certificatesV1 = must(c, certificatesv1.NewForConfigAndClient) })
	return c.certificatesV1
}

// CertificatesV1beta1 returns the CertificatesV1beta1Client, made on the first call.
func (c *Clientset) CertificatesV1beta1() certificatesv1beta1.CertificatesV1beta1Interface {
	c.certificatesV1beta1Once.Do(func() { c.certificatesV1beta1 = must(c, certificatesv1beta1.NewForConfigAndClient) })
	return c.certificatesV1beta1
}

// CertificatesV1alpha1 returns the CertificatesV1alpha1Client, made on the first call.
func (c *Clientset) CertificatesV1alpha1() certificatesv1alpha1.CertificatesV1alpha1Interface {
	c.certificatesV1alpha1Once.Do(func() { c.certificatesV1alpha1 = must(c, certificatesv1alpha1.NewForConfigAndClient) })
	return c.certificatesV1alpha1
}

// CoordinationV1alpha2 returns the CoordinationV1alpha2Client, made on the first call.
func (c *Clientset) CoordinationV1alpha2() coordinationv1alpha2.CoordinationV1alpha2Interface {
	c.coordinationV1alpha2Once.Do(func() { c.coordinationV1alpha2 = must(c, coordinationv1alpha2.NewForConfigAndClient) })
	return c.coordinationV1alpha2
}

// CoordinationV1beta1 returns the CoordinationV1beta1Client, made on the first call.
func (c *Clientset) CoordinationV1beta1() coordinationv1beta1.CoordinationV1beta1Interface {
	c.coordinationV1beta1Once.Do(func() { c.coordinationV1beta1 = must(c, coordinationv1beta1.NewForConfigAndClient) })
	return c.coordinationV1beta1
}

// CoordinationV1 returns the CoordinationV1Client, made on the first call.
func (c *Clientset) CoordinationV1() coordinationv1.CoordinationV1Interface {
	c.coordinationV1Once.Do(func() { c.coordinationV1 = must(c, coordinationv1.NewForConfigAndClient) })
	return c.coordinationV1
}

// CoreV1 returns the CoreV1Client, made on the first call.
func (c *Clientset) CoreV1() corev1.CoreV1Interface {
	c.coreV1Once.Do(func() { c.coreV1 = must(c, corev1.NewForConfigAndClient) })
	return c.coreV1
}

// DiscoveryV1 returns the DiscoveryV1Client, made on the first call.
func (c *Clientset) DiscoveryV1() discoveryv1.DiscoveryV1Interface {
	c.discoveryV1Once.Do(func() { c.discoveryV1 = must(c, discoveryv1.NewForConfigAndClient) })
	return c.discoveryV1
}

// DiscoveryV1beta1 returns the DiscoveryV1beta1Client, made on the first call.
func (c *Clientset) DiscoveryV1beta1() discoveryv1beta1.DiscoveryV1beta1Interface {
	c.discoveryV1beta1Once.Do(func() { c.discoveryV1beta1 = must(c, discoveryv1beta1.NewForConfigAndClient) })
	return c.discoveryV1beta1
}

// EventsV1 returns the EventsV1Client, made on the first call.
func (c *Clientset) EventsV1() eventsv1.EventsV1Interface {
	c.eventsV1Once.Do(func() { c.eventsV1 = must(c, eventsv1.NewForConfigAndClient) })
	return c.eventsV1
}

// EventsV1beta1 returns the EventsV1beta1Client, made on the first call.
func (c *Clientset) EventsV1beta1() eventsv1beta1.EventsV1beta1Interface {
	c.eventsV1beta1Once.Do(func() { c.eventsV1beta1 = must(c, eventsv1beta1.NewForConfigAndClient) })
	return c.eventsV1beta1
}

// ExtensionsV1beta1 returns the ExtensionsV1beta1Client, made on the first call.
func (c *Clientset) ExtensionsV1beta1() extensionsv1beta1.ExtensionsV1beta1Interface {
	c.extensionsV1beta1Once.Do(func() { c.extensionsV1beta1 = must(c, extensionsv1beta1.NewForConfigAndClient) })
	return c.extensionsV1beta1
}

// FlowcontrolV1 returns the FlowcontrolV1Client, made on the first call.
func (c *Clientset) FlowcontrolV1() flowcontrolv1.FlowcontrolV1Interface {
	c.flowcontrolV1Once.Do(func() { c.flowcontrolV1 = must(c, flowcontrolv1.NewForConfigAndClient) })
	return c.flowcontrolV1
}

// FlowcontrolV1beta1 returns the FlowcontrolV1beta1Client, made on the first call.
func (c *Clientset) FlowcontrolV1beta1() flowcontrolv1beta1.FlowcontrolV1beta1Interface {
	c.flowcontrolV1beta1Once.Do(func() { c.flowcontrolV1beta1 = must(c, flowcontrolv1beta1.NewForConfigAndClient) })
	return c.flowcontrolV1beta1
}

// FlowcontrolV1beta2 returns the FlowcontrolV1beta2Client, made on the first call.
func (c *Clientset) FlowcontrolV1beta2() flowcontrolv1beta2.FlowcontrolV1beta2Interface {
	c.flowcontrolV1beta2Once.Do(func() { c.flowcontrolV1beta2 = must(c, flowcontrolv1beta2.NewForConfigAndClient) })
	return c.flowcontrolV1beta2
}

// FlowcontrolV1beta3 returns the FlowcontrolV1beta3Client, made on the first call.
func (c *Clientset) FlowcontrolV1beta3() flowcontrolv1beta3.FlowcontrolV1beta3Interface {
	c.flowcontrolV1beta3Once.Do(func() { c.flowcontrolV1beta3 = must(c, flowcontrolv1beta3.NewForConfigAndClient) })
	return c.flowcontrolV1beta3
}

// LifecycleV1alpha1 returns the LifecycleV1alpha1Client, made on the first call.
func (c *Clientset) LifecycleV1alpha1() lifecyclev1alpha1.LifecycleV1alpha1Interface {
	c.lifecycleV1alpha1Once.Do(func() { c.lifecycleV1alpha1 = must(c, lifecyclev1alpha1.NewForConfigAndClient) })
	return c.lifecycleV1alpha1
}

// NetworkingV1 returns the NetworkingV1Client, made on the first call.
func (c *Clientset) NetworkingV1() networkingv1.NetworkingV1Interface {
	c.networkingV1Once.Do(func() { c.networkingV1 = must(c, networkingv1.NewForConfigAndClient) })
	return c.networkingV1
}

// NetworkingV1beta1 returns the NetworkingV1beta1Client, made on the first call.
func (c *Clientset) NetworkingV1beta1() networkingv1beta1.NetworkingV1beta1Interface {
	c.networkingV1beta1Once.Do(func() { c.networkingV1beta1 = must(c, networkingv1beta1.NewForConfigAndClient) })
	return c.networkingV1beta1
}

// NodeV1 returns the NodeV1Client, made on the first call.
func (c *Clientset) NodeV1() nodev1.NodeV1Interface {
	c.nodeV1Once.Do(func() { c.nodeV1 = must(c, nodev1.NewForConfigAndClient) })
	return c.nodeV1
}

// NodeV1alpha1 returns the NodeV1alpha1Client, made on the first call.
func (c *Clientset) NodeV1alpha1() nodev1alpha1.NodeV1alpha1Interface {
	c.nodeV1alpha1Once.Do(func() { c.nodeV1alpha1 = must(c, nodev1alpha1.NewForConfigAndClient) })
	return c.nodeV1alpha1
}

// NodeV1beta1 returns the NodeV1beta1Client, made on the first call.
func (c *Clientset) NodeV1beta1() nodev1beta1.NodeV1beta1Interface {
	c.nodeV1beta1Once.Do(func() { c.nodeV1beta1 = must(c, nodev1beta1.NewForConfigAndClient) })
	return c.nodeV1beta1
}

// PolicyV1 returns the PolicyV1Client, made on the first call.
func (c *Clientset) PolicyV1() policyv1.PolicyV1Interface {
	c.policyV1Once.Do(func() { c.policyV1 = must(c, policyv1.NewForConfigAndClient) })
	return c.policyV1
}

// PolicyV1beta1 returns the PolicyV1beta1Client, made on the first call.
func (c *Clientset) PolicyV1beta1() policyv1beta1.PolicyV1beta1Interface {
	c.policyV1beta1Once.Do(func() { c.policyV1beta1 = must(c, policyv1beta1.NewForConfigAndClient) })
	return c.policyV1beta1
}

// RbacV1 returns the RbacV1Client, made on the first call.
func (c *Clientset) RbacV1() rbacv1.RbacV1Interface {
	c.rbacV1Once.Do(func() { c.rbacV1 = must(c, rbacv1.NewForConfigAndClient) })
	return c.rbacV1
}

// RbacV1beta1 returns the RbacV1beta1Client, made on the first call.
func (c *Clientset) RbacV1beta1() rbacv1beta1.RbacV1beta1Interface {
	c.rbacV1beta1Once.Do(func() { c.rbacV1beta1 = must(c, rbacv1beta1.NewForConfigAndClient) })
	return c.rbacV1beta1
}

// RbacV1alpha1 returns the RbacV1alpha1Client, made on the first call.
func (c *Clientset) RbacV1alpha1() rbacv1alpha1.RbacV1alpha1Interface {
	c.rbacV1alpha1Once.Do(func() { c.rbacV1alpha1 = must(c, rbacv1alpha1.NewForConfigAndClient) })
	return c.rbacV1alpha1
}

// ResourceV1 returns the ResourceV1Client, made on the first call.
func (c *Clientset) ResourceV1() resourcev1.ResourceV1Interface {
	c.resourceV1Once.Do(func() { c.resourceV1 = must(c, resourcev1.NewForConfigAndClient) })
	return c.resourceV1
}

// ResourceV1beta2 returns the ResourceV1beta2Client, made on the first call.
func (c *Clientset) ResourceV1beta2() resourcev1beta2.ResourceV1beta2Interface {
	c.resourceV1beta2Once.Do(func() { c.resourceV1beta2 = must(c, resourcev1beta2.NewForConfigAndClient) })
	return c.resourceV1beta2
}

// ResourceV1beta1 returns the ResourceV1beta1Client, made on the first call.
func (c *Clientset) ResourceV1beta1() resourcev1beta1.ResourceV1beta1Interface {
	c.resourceV1beta1Once.Do(func() { c.resourceV1beta1 = must(c, resourcev1beta1.NewForConfigAndClient) })
	return c.resourceV1beta1
}

// ResourceV1alpha3 returns the ResourceV1alpha3Client, made on the first call.
func (c *Clientset) ResourceV1alpha3() resourcev1alpha3.ResourceV1alpha3Interface {
	c.resourceV1alpha3Once.Do(func() { c.resourceV1alpha3 = must(c, resourcev1alpha3.NewForConfigAndClient) })
	return c.resourceV1alpha3
}

// SchedulingV1alpha3 returns the SchedulingV1alpha3Client, made on the first call.
func (c *Clientset) SchedulingV1alpha3() schedulingv1alpha3.SchedulingV1alpha3Interface {
	c.schedulingV1alpha3Once.Do(func() { c.schedulingV1alpha3 = must(c, schedulingv1alpha3.NewForConfigAndClient) })
	return c.schedulingV1alpha3
}

// SchedulingV1beta1 returns the SchedulingV1beta1Client, made on the first call.
func (c *Clientset) SchedulingV1beta1() schedulingv1beta1.SchedulingV1beta1Interface {
	c.schedulingV1beta1Once.Do(func() { c.schedulingV1beta1 = must(c, schedulingv1beta1.NewForConfigAndClient) })
	return c.schedulingV1beta1
}

// SchedulingV1 returns the SchedulingV1Client, made on the first call.
func (c *Clientset) SchedulingV1() schedulingv1.SchedulingV1Interface {
	c.schedulingV1Once.Do(func() { c.schedulingV1 = must(c, schedulingv1.NewForConfigAndClient) })
	return c.schedulingV1
}

// StorageV1beta1 returns the StorageV1beta1Client, made on the first call.
func (c *Clientset) StorageV1beta1() storagev1beta1.StorageV1beta1Interface {
	c.storageV1beta1Once.Do(func() { c.storageV1beta1 = must(c, storagev1beta1.NewForConfigAndClient) })
	return c.storageV1beta1
}

// StorageV1 returns the StorageV1Client, made on the first call.
func (c *Clientset) StorageV1() storagev1.StorageV1Interface {
	c.storageV1Once.Do(func() { c.storageV1 = must(c, storagev1.NewForConfigAndClient) })
	return c.storageV1
}

// StorageV1alpha1 returns the StorageV1alpha1Client, made on the first call.
func (c *Clientset) StorageV1alpha1() storagev1alpha1.StorageV1alpha1Interface {
	c.storageV1alpha1Once.Do(func() { c.storageV1alpha1 = must(c, storagev1alpha1.NewForConfigAndClient) })
	return c.storageV1alpha1
}

// StoragemigrationV1 returns the StoragemigrationV1Client, made on the first call.
func (c *Clientset) StoragemigrationV1() storagemigrationv1.StoragemigrationV1Interface {
	c.storagemigrationV1Once.Do(func() { c.storagemigrationV1 = must(c, storagemigrationv1.NewForConfigAndClient) })
	return c.storagemigrationV1
}

// StoragemigrationV1beta1 returns the StoragemigrationV1beta1Client, made on the first call.
func (c *Clientset) StoragemigrationV1beta1() storagemigrationv1beta1.StoragemigrationV1beta1Interface {
	c.storagemigrationV1beta1Once.Do(func() { c.storagemigrationV1beta1 = must(c, storagemigrationv1beta1.NewForConfigAndClient) })
	return c.storagemigrationV1beta1
}
