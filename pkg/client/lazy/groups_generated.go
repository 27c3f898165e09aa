// Code generated from k8s.io/client-go@v0.37.2/kubernetes/clientset.go by
// hack/lazyclientset.py; DO NOT EDIT.

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

// groups holds one constructor per API group version, each run on first use.
type groups struct {
	admissionregistrationV1       func() *admissionregistrationv1.AdmissionregistrationV1Client
	admissionregistrationV1alpha1 func() *admissionregistrationv1alpha1.AdmissionregistrationV1alpha1Client
	admissionregistrationV1beta1  func() *admissionregistrationv1beta1.AdmissionregistrationV1beta1Client
	internalV1alpha1              func() *internalv1alpha1.InternalV1alpha1Client
	appsV1                        func() *appsv1.AppsV1Client
	appsV1beta1                   func() *appsv1beta1.AppsV1beta1Client
	appsV1beta2                   func() *appsv1beta2.AppsV1beta2Client
	authenticationV1              func() *authenticationv1.AuthenticationV1Client
	authenticationV1alpha1        func() *authenticationv1alpha1.AuthenticationV1alpha1Client
	authenticationV1beta1         func() *authenticationv1beta1.AuthenticationV1beta1Client
	authorizationV1               func() *authorizationv1.AuthorizationV1Client
	authorizationV1beta1          func() *authorizationv1beta1.AuthorizationV1beta1Client
	autoscalingV1                 func() *autoscalingv1.AutoscalingV1Client
	autoscalingV2                 func() *autoscalingv2.AutoscalingV2Client
	batchV1                       func() *batchv1.BatchV1Client
	batchV1beta1                  func() *batchv1beta1.BatchV1beta1Client
	certificatesV1                func() *certificatesv1.CertificatesV1Client
	certificatesV1beta1           func() *certificatesv1beta1.CertificatesV1beta1Client
	certificatesV1alpha1          func() *certificatesv1alpha1.CertificatesV1alpha1Client
	coordinationV1alpha2          func() *coordinationv1alpha2.CoordinationV1alpha2Client
	coordinationV1beta1           func() *coordinationv1beta1.CoordinationV1beta1Client
	coordinationV1                func() *coordinationv1.CoordinationV1Client
	coreV1                        func() *corev1.CoreV1Client
	discoveryV1                   func() *discoveryv1.DiscoveryV1Client
	discoveryV1beta1              func() *discoveryv1beta1.DiscoveryV1beta1Client
	eventsV1                      func() *eventsv1.EventsV1Client
	eventsV1beta1                 func() *eventsv1beta1.EventsV1beta1Client
	extensionsV1beta1             func() *extensionsv1beta1.ExtensionsV1beta1Client
	flowcontrolV1                 func() *flowcontrolv1.FlowcontrolV1Client
	flowcontrolV1beta1            func() *flowcontrolv1beta1.FlowcontrolV1beta1Client
	flowcontrolV1beta2            func() *flowcontrolv1beta2.FlowcontrolV1beta2Client
	flowcontrolV1beta3            func() *flowcontrolv1beta3.FlowcontrolV1beta3Client
	lifecycleV1alpha1             func() *lifecyclev1alpha1.LifecycleV1alpha1Client
	networkingV1                  func() *networkingv1.NetworkingV1Client
	networkingV1beta1             func() *networkingv1beta1.NetworkingV1beta1Client
	nodeV1                        func() *nodev1.NodeV1Client
	nodeV1alpha1                  func() *nodev1alpha1.NodeV1alpha1Client
	nodeV1beta1                   func() *nodev1beta1.NodeV1beta1Client
	policyV1                      func() *policyv1.PolicyV1Client
	policyV1beta1                 func() *policyv1beta1.PolicyV1beta1Client
	rbacV1                        func() *rbacv1.RbacV1Client
	rbacV1beta1                   func() *rbacv1beta1.RbacV1beta1Client
	rbacV1alpha1                  func() *rbacv1alpha1.RbacV1alpha1Client
	resourceV1                    func() *resourcev1.ResourceV1Client
	resourceV1beta2               func() *resourcev1beta2.ResourceV1beta2Client
	resourceV1beta1               func() *resourcev1beta1.ResourceV1beta1Client
	resourceV1alpha3              func() *resourcev1alpha3.ResourceV1alpha3Client
	schedulingV1alpha3            func() *schedulingv1alpha3.SchedulingV1alpha3Client
	schedulingV1beta1             func() *schedulingv1beta1.SchedulingV1beta1Client
	schedulingV1                  func() *schedulingv1.SchedulingV1Client
	storageV1beta1                func() *storagev1beta1.StorageV1beta1Client
	storageV1                     func() *storagev1.StorageV1Client
	storageV1alpha1               func() *storagev1alpha1.StorageV1alpha1Client
	storagemigrationV1            func() *storagemigrationv1.StoragemigrationV1Client
	storagemigrationV1beta1       func() *storagemigrationv1beta1.StoragemigrationV1beta1Client
}

func (c *Clientset) initGroups() {
	c.admissionregistrationV1 = sync.OnceValue(func() *admissionregistrationv1.AdmissionregistrationV1Client {
		return must(c, admissionregistrationv1.NewForConfigAndClient)
	})
	c.admissionregistrationV1alpha1 = sync.OnceValue(func() *admissionregistrationv1alpha1.AdmissionregistrationV1alpha1Client {
		return must(c, admissionregistrationv1alpha1.NewForConfigAndClient)
	})
	c.admissionregistrationV1beta1 = sync.OnceValue(func() *admissionregistrationv1beta1.AdmissionregistrationV1beta1Client {
		return must(c, admissionregistrationv1beta1.NewForConfigAndClient)
	})
	c.internalV1alpha1 = sync.OnceValue(func() *internalv1alpha1.InternalV1alpha1Client {
		return must(c, internalv1alpha1.NewForConfigAndClient)
	})
	c.appsV1 = sync.OnceValue(func() *appsv1.AppsV1Client { return must(c, appsv1.NewForConfigAndClient) })
	c.appsV1beta1 = sync.OnceValue(func() *appsv1beta1.AppsV1beta1Client { return must(c, appsv1beta1.NewForConfigAndClient) })
	c.appsV1beta2 = sync.OnceValue(func() *appsv1beta2.AppsV1beta2Client { return must(c, appsv1beta2.NewForConfigAndClient) })
	c.authenticationV1 = sync.OnceValue(func() *authenticationv1.AuthenticationV1Client {
		return must(c, authenticationv1.NewForConfigAndClient)
	})
	c.authenticationV1alpha1 = sync.OnceValue(func() *authenticationv1alpha1.AuthenticationV1alpha1Client {
		return must(c, authenticationv1alpha1.NewForConfigAndClient)
	})
	c.authenticationV1beta1 = sync.OnceValue(func() *authenticationv1beta1.AuthenticationV1beta1Client {
		return must(c, authenticationv1beta1.NewForConfigAndClient)
	})
	c.authorizationV1 = sync.OnceValue(func() *authorizationv1.AuthorizationV1Client { return must(c, authorizationv1.NewForConfigAndClient) })
	c.authorizationV1beta1 = sync.OnceValue(func() *authorizationv1beta1.AuthorizationV1beta1Client {
		return must(c, authorizationv1beta1.NewForConfigAndClient)
	})
	c.autoscalingV1 = sync.OnceValue(func() *autoscalingv1.AutoscalingV1Client { return must(c, autoscalingv1.NewForConfigAndClient) })
	c.autoscalingV2 = sync.OnceValue(func() *autoscalingv2.AutoscalingV2Client { return must(c, autoscalingv2.NewForConfigAndClient) })
	c.batchV1 = sync.OnceValue(func() *batchv1.BatchV1Client { return must(c, batchv1.NewForConfigAndClient) })
	c.batchV1beta1 = sync.OnceValue(func() *batchv1beta1.BatchV1beta1Client { return must(c, batchv1beta1.NewForConfigAndClient) })
	c.certificatesV1 = sync.OnceValue(func() *certificatesv1.CertificatesV1Client { return must(c, certificatesv1.NewForConfigAndClient) })
	c.certificatesV1beta1 = sync.OnceValue(func() *certificatesv1beta1.CertificatesV1beta1Client {
		return must(c, certificatesv1beta1.NewForConfigAndClient)
	})
	c.certificatesV1alpha1 = sync.OnceValue(func() *certificatesv1alpha1.CertificatesV1alpha1Client {
		return must(c, certificatesv1alpha1.NewForConfigAndClient)
	})
	c.coordinationV1alpha2 = sync.OnceValue(func() *coordinationv1alpha2.CoordinationV1alpha2Client {
		return must(c, coordinationv1alpha2.NewForConfigAndClient)
	})
	c.coordinationV1beta1 = sync.OnceValue(func() *coordinationv1beta1.CoordinationV1beta1Client {
		return must(c, coordinationv1beta1.NewForConfigAndClient)
	})
	c.coordinationV1 = sync.OnceValue(func() *coordinationv1.CoordinationV1Client { return must(c, coordinationv1.NewForConfigAndClient) })
	c.coreV1 = sync.OnceValue(func() *corev1.CoreV1Client { return must(c, corev1.NewForConfigAndClient) })
	c.discoveryV1 = sync.OnceValue(func() *discoveryv1.DiscoveryV1Client { return must(c, discoveryv1.NewForConfigAndClient) })
	c.discoveryV1beta1 = sync.OnceValue(func() *discoveryv1beta1.DiscoveryV1beta1Client {
		return must(c, discoveryv1beta1.NewForConfigAndClient)
	})
	c.eventsV1 = sync.OnceValue(func() *eventsv1.EventsV1Client { return must(c, eventsv1.NewForConfigAndClient) })
	c.eventsV1beta1 = sync.OnceValue(func() *eventsv1beta1.EventsV1beta1Client { return must(c, eventsv1beta1.NewForConfigAndClient) })
	c.extensionsV1beta1 = sync.OnceValue(func() *extensionsv1beta1.ExtensionsV1beta1Client {
		return must(c, extensionsv1beta1.NewForConfigAndClient)
	})
	c.flowcontrolV1 = sync.OnceValue(func() *flowcontrolv1.FlowcontrolV1Client { return must(c, flowcontrolv1.NewForConfigAndClient) })
	c.flowcontrolV1beta1 = sync.OnceValue(func() *flowcontrolv1beta1.FlowcontrolV1beta1Client {
		return must(c, flowcontrolv1beta1.NewForConfigAndClient)
	})
	c.flowcontrolV1beta2 = sync.OnceValue(func() *flowcontrolv1beta2.FlowcontrolV1beta2Client {
		return must(c, flowcontrolv1beta2.NewForConfigAndClient)
	})
	c.flowcontrolV1beta3 = sync.OnceValue(func() *flowcontrolv1beta3.FlowcontrolV1beta3Client {
		return must(c, flowcontrolv1beta3.NewForConfigAndClient)
	})
	c.lifecycleV1alpha1 = sync.OnceValue(func() *lifecyclev1alpha1.LifecycleV1alpha1Client {
		return must(c, lifecyclev1alpha1.NewForConfigAndClient)
	})
	c.networkingV1 = sync.OnceValue(func() *networkingv1.NetworkingV1Client { return must(c, networkingv1.NewForConfigAndClient) })
	c.networkingV1beta1 = sync.OnceValue(func() *networkingv1beta1.NetworkingV1beta1Client {
		return must(c, networkingv1beta1.NewForConfigAndClient)
	})
	c.nodeV1 = sync.OnceValue(func() *nodev1.NodeV1Client { return must(c, nodev1.NewForConfigAndClient) })
	c.nodeV1alpha1 = sync.OnceValue(func() *nodev1alpha1.NodeV1alpha1Client { return must(c, nodev1alpha1.NewForConfigAndClient) })
	c.nodeV1beta1 = sync.OnceValue(func() *nodev1beta1.NodeV1beta1Client { return must(c, nodev1beta1.NewForConfigAndClient) })
	c.policyV1 = sync.OnceValue(func() *policyv1.PolicyV1Client { return must(c, policyv1.NewForConfigAndClient) })
	c.policyV1beta1 = sync.OnceValue(func() *policyv1beta1.PolicyV1beta1Client { return must(c, policyv1beta1.NewForConfigAndClient) })
	c.rbacV1 = sync.OnceValue(func() *rbacv1.RbacV1Client { return must(c, rbacv1.NewForConfigAndClient) })
	c.rbacV1beta1 = sync.OnceValue(func() *rbacv1beta1.RbacV1beta1Client { return must(c, rbacv1beta1.NewForConfigAndClient) })
	c.rbacV1alpha1 = sync.OnceValue(func() *rbacv1alpha1.RbacV1alpha1Client { return must(c, rbacv1alpha1.NewForConfigAndClient) })
	c.resourceV1 = sync.OnceValue(func() *resourcev1.ResourceV1Client { return must(c, resourcev1.NewForConfigAndClient) })
	c.resourceV1beta2 = sync.OnceValue(func() *resourcev1beta2.ResourceV1beta2Client { return must(c, resourcev1beta2.NewForConfigAndClient) })
	c.resourceV1beta1 = sync.OnceValue(func() *resourcev1beta1.ResourceV1beta1Client { return must(c, resourcev1beta1.NewForConfigAndClient) })
	c.resourceV1alpha3 = sync.OnceValue(func() *resourcev1alpha3.ResourceV1alpha3Client {
		return must(c, resourcev1alpha3.NewForConfigAndClient)
	})
	c.schedulingV1alpha3 = sync.OnceValue(func() *schedulingv1alpha3.SchedulingV1alpha3Client {
		return must(c, schedulingv1alpha3.NewForConfigAndClient)
	})
	c.schedulingV1beta1 = sync.OnceValue(func() *schedulingv1beta1.SchedulingV1beta1Client {
		return must(c, schedulingv1beta1.NewForConfigAndClient)
	})
	c.schedulingV1 = sync.OnceValue(func() *schedulingv1.SchedulingV1Client { return must(c, schedulingv1.NewForConfigAndClient) })
	c.storageV1beta1 = sync.OnceValue(func() *storagev1beta1.StorageV1beta1Client { return must(c, storagev1beta1.NewForConfigAndClient) })
	c.storageV1 = sync.OnceValue(func() *storagev1.StorageV1Client { return must(c, storagev1.NewForConfigAndClient) })
	c.storageV1alpha1 = sync.OnceValue(func() *storagev1alpha1.StorageV1alpha1Client { return must(c, storagev1alpha1.NewForConfigAndClient) })
	c.storagemigrationV1 = sync.OnceValue(func() *storagemigrationv1.StoragemigrationV1Client {
		return must(c, storagemigrationv1.NewForConfigAndClient)
	})
	c.storagemigrationV1beta1 = sync.OnceValue(func() *storagemigrationv1beta1.StoragemigrationV1beta1Client {
		return must(c, storagemigrationv1beta1.NewForConfigAndClient)
	})
}

// AdmissionregistrationV1 returns the AdmissionregistrationV1Client, made on the first call.
func (c *Clientset) AdmissionregistrationV1() admissionregistrationv1.AdmissionregistrationV1Interface {
	return c.admissionregistrationV1()
}

// AdmissionregistrationV1alpha1 returns the AdmissionregistrationV1alpha1Client, made on the first call.
func (c *Clientset) AdmissionregistrationV1alpha1() admissionregistrationv1alpha1.AdmissionregistrationV1alpha1Interface {
	return c.admissionregistrationV1alpha1()
}

// AdmissionregistrationV1beta1 returns the AdmissionregistrationV1beta1Client, made on the first call.
func (c *Clientset) AdmissionregistrationV1beta1() admissionregistrationv1beta1.AdmissionregistrationV1beta1Interface {
	return c.admissionregistrationV1beta1()
}

// InternalV1alpha1 returns the InternalV1alpha1Client, made on the first call.
func (c *Clientset) InternalV1alpha1() internalv1alpha1.InternalV1alpha1Interface {
	return c.internalV1alpha1()
}

// AppsV1 returns the AppsV1Client, made on the first call.
func (c *Clientset) AppsV1() appsv1.AppsV1Interface {
	return c.appsV1()
}

// AppsV1beta1 returns the AppsV1beta1Client, made on the first call.
func (c *Clientset) AppsV1beta1() appsv1beta1.AppsV1beta1Interface {
	return c.appsV1beta1()
}

// AppsV1beta2 returns the AppsV1beta2Client, made on the first call.
func (c *Clientset) AppsV1beta2() appsv1beta2.AppsV1beta2Interface {
	return c.appsV1beta2()
}

// AuthenticationV1 returns the AuthenticationV1Client, made on the first call.
func (c *Clientset) AuthenticationV1() authenticationv1.AuthenticationV1Interface {
	return c.authenticationV1()
}

// AuthenticationV1alpha1 returns the AuthenticationV1alpha1Client, made on the first call.
func (c *Clientset) AuthenticationV1alpha1() authenticationv1alpha1.AuthenticationV1alpha1Interface {
	return c.authenticationV1alpha1()
}

// AuthenticationV1beta1 returns the AuthenticationV1beta1Client, made on the first call.
func (c *Clientset) AuthenticationV1beta1() authenticationv1beta1.AuthenticationV1beta1Interface {
	return c.authenticationV1beta1()
}

// AuthorizationV1 returns the AuthorizationV1Client, made on the first call.
func (c *Clientset) AuthorizationV1() authorizationv1.AuthorizationV1Interface {
	return c.authorizationV1()
}

// AuthorizationV1beta1 returns the AuthorizationV1beta1Client, made on the first call.
func (c *Clientset) AuthorizationV1beta1() authorizationv1beta1.AuthorizationV1beta1Interface {
	return c.authorizationV1beta1()
}

// AutoscalingV1 returns the AutoscalingV1Client, made on the first call.
func (c *Clientset) AutoscalingV1() autoscalingv1.AutoscalingV1Interface {
	return c.autoscalingV1()
}

// AutoscalingV2 returns the AutoscalingV2Client, made on the first call.
func (c *Clientset) AutoscalingV2() autoscalingv2.AutoscalingV2Interface {
	return c.autoscalingV2()
}

// BatchV1 returns the BatchV1Client, made on the first call.
func (c *Clientset) BatchV1() batchv1.BatchV1Interface {
	return c.batchV1()
}

// BatchV1beta1 returns the BatchV1beta1Client, made on the first call.
func (c *Clientset) BatchV1beta1() batchv1beta1.BatchV1beta1Interface {
	return c.batchV1beta1()
}

// CertificatesV1 returns the CertificatesV1Client, made on the first call.
func (c *Clientset) CertificatesV1() certificatesv1.CertificatesV1Interface {
	return c.certificatesV1()
}

// CertificatesV1beta1 returns the CertificatesV1beta1Client, made on the first call.
func (c *Clientset) CertificatesV1beta1() certificatesv1beta1.CertificatesV1beta1Interface {
	return c.certificatesV1beta1()
}

// CertificatesV1alpha1 returns the CertificatesV1alpha1Client, made on the first call.
func (c *Clientset) CertificatesV1alpha1() certificatesv1alpha1.CertificatesV1alpha1Interface {
	return c.certificatesV1alpha1()
}

// CoordinationV1alpha2 returns the CoordinationV1alpha2Client, made on the first call.
func (c *Clientset) CoordinationV1alpha2() coordinationv1alpha2.CoordinationV1alpha2Interface {
	return c.coordinationV1alpha2()
}

// CoordinationV1beta1 returns the CoordinationV1beta1Client, made on the first call.
func (c *Clientset) CoordinationV1beta1() coordinationv1beta1.CoordinationV1beta1Interface {
	return c.coordinationV1beta1()
}

// CoordinationV1 returns the CoordinationV1Client, made on the first call.
func (c *Clientset) CoordinationV1() coordinationv1.CoordinationV1Interface {
	return c.coordinationV1()
}

// CoreV1 returns the CoreV1Client, made on the first call.
func (c *Clientset) CoreV1() corev1.CoreV1Interface {
	return c.coreV1()
}

// DiscoveryV1 returns the DiscoveryV1Client, made on the first call.
func (c *Clientset) DiscoveryV1() discoveryv1.DiscoveryV1Interface {
	return c.discoveryV1()
}

// DiscoveryV1beta1 returns the DiscoveryV1beta1Client, made on the first call.
func (c *Clientset) DiscoveryV1beta1() discoveryv1beta1.DiscoveryV1beta1Interface {
	return c.discoveryV1beta1()
}

// EventsV1 returns the EventsV1Client, made on the first call.
func (c *Clientset) EventsV1() eventsv1.EventsV1Interface {
	return c.eventsV1()
}

// EventsV1beta1 returns the EventsV1beta1Client, made on the first call.
func (c *Clientset) EventsV1beta1() eventsv1beta1.EventsV1beta1Interface {
	return c.eventsV1beta1()
}

// ExtensionsV1beta1 returns the ExtensionsV1beta1Client, made on the first call.
func (c *Clientset) ExtensionsV1beta1() extensionsv1beta1.ExtensionsV1beta1Interface {
	return c.extensionsV1beta1()
}

// FlowcontrolV1 returns the FlowcontrolV1Client, made on the first call.
func (c *Clientset) FlowcontrolV1() flowcontrolv1.FlowcontrolV1Interface {
	return c.flowcontrolV1()
}

// FlowcontrolV1beta1 returns the FlowcontrolV1beta1Client, made on the first call.
func (c *Clientset) FlowcontrolV1beta1() flowcontrolv1beta1.FlowcontrolV1beta1Interface {
	return c.flowcontrolV1beta1()
}

// FlowcontrolV1beta2 returns the FlowcontrolV1beta2Client, made on the first call.
func (c *Clientset) FlowcontrolV1beta2() flowcontrolv1beta2.FlowcontrolV1beta2Interface {
	return c.flowcontrolV1beta2()
}

// FlowcontrolV1beta3 returns the FlowcontrolV1beta3Client, made on the first call.
func (c *Clientset) FlowcontrolV1beta3() flowcontrolv1beta3.FlowcontrolV1beta3Interface {
	return c.flowcontrolV1beta3()
}

// LifecycleV1alpha1 returns the LifecycleV1alpha1Client, made on the first call.
func (c *Clientset) LifecycleV1alpha1() lifecyclev1alpha1.LifecycleV1alpha1Interface {
	return c.lifecycleV1alpha1()
}

// NetworkingV1 returns the NetworkingV1Client, made on the first call.
func (c *Clientset) NetworkingV1() networkingv1.NetworkingV1Interface {
	return c.networkingV1()
}

// NetworkingV1beta1 returns the NetworkingV1beta1Client, made on the first call.
func (c *Clientset) NetworkingV1beta1() networkingv1beta1.NetworkingV1beta1Interface {
	return c.networkingV1beta1()
}

// NodeV1 returns the NodeV1Client, made on the first call.
func (c *Clientset) NodeV1() nodev1.NodeV1Interface {
	return c.nodeV1()
}

// NodeV1alpha1 returns the NodeV1alpha1Client, made on the first call.
func (c *Clientset) NodeV1alpha1() nodev1alpha1.NodeV1alpha1Interface {
	return c.nodeV1alpha1()
}

// NodeV1beta1 returns the NodeV1beta1Client, made on the first call.
func (c *Clientset) NodeV1beta1() nodev1beta1.NodeV1beta1Interface {
	return c.nodeV1beta1()
}

// PolicyV1 returns the PolicyV1Client, made on the first call.
func (c *Clientset) PolicyV1() policyv1.PolicyV1Interface {
	return c.policyV1()
}

// PolicyV1beta1 returns the PolicyV1beta1Client, made on the first call.
func (c *Clientset) PolicyV1beta1() policyv1beta1.PolicyV1beta1Interface {
	return c.policyV1beta1()
}

// RbacV1 returns the RbacV1Client, made on the first call.
func (c *Clientset) RbacV1() rbacv1.RbacV1Interface {
	return c.rbacV1()
}

// RbacV1beta1 returns the RbacV1beta1Client, made on the first call.
func (c *Clientset) RbacV1beta1() rbacv1beta1.RbacV1beta1Interface {
	return c.rbacV1beta1()
}

// RbacV1alpha1 returns the RbacV1alpha1Client, made on the first call.
func (c *Clientset) RbacV1alpha1() rbacv1alpha1.RbacV1alpha1Interface {
	return c.rbacV1alpha1()
}

// ResourceV1 returns the ResourceV1Client, made on the first call.
func (c *Clientset) ResourceV1() resourcev1.ResourceV1Interface {
	return c.resourceV1()
}

// ResourceV1beta2 returns the ResourceV1beta2Client, made on the first call.
func (c *Clientset) ResourceV1beta2() resourcev1beta2.ResourceV1beta2Interface {
	return c.resourceV1beta2()
}

// ResourceV1beta1 returns the ResourceV1beta1Client, made on the first call.
func (c *Clientset) ResourceV1beta1() resourcev1beta1.ResourceV1beta1Interface {
	return c.resourceV1beta1()
}

// ResourceV1alpha3 returns the ResourceV1alpha3Client, made on the first call.
func (c *Clientset) ResourceV1alpha3() resourcev1alpha3.ResourceV1alpha3Interface {
	return c.resourceV1alpha3()
}

// SchedulingV1alpha3 returns the SchedulingV1alpha3Client, made on the first call.
func (c *Clientset) SchedulingV1alpha3() schedulingv1alpha3.SchedulingV1alpha3Interface {
	return c.schedulingV1alpha3()
}

// SchedulingV1beta1 returns the SchedulingV1beta1Client, made on the first call.
func (c *Clientset) SchedulingV1beta1() schedulingv1beta1.SchedulingV1beta1Interface {
	return c.schedulingV1beta1()
}

// SchedulingV1 returns the SchedulingV1Client, made on the first call.
func (c *Clientset) SchedulingV1() schedulingv1.SchedulingV1Interface {
	return c.schedulingV1()
}

// StorageV1beta1 returns the StorageV1beta1Client, made on the first call.
func (c *Clientset) StorageV1beta1() storagev1beta1.StorageV1beta1Interface {
	return c.storageV1beta1()
}

// StorageV1 returns the StorageV1Client, made on the first call.
func (c *Clientset) StorageV1() storagev1.StorageV1Interface {
	return c.storageV1()
}

// StorageV1alpha1 returns the StorageV1alpha1Client, made on the first call.
func (c *Clientset) StorageV1alpha1() storagev1alpha1.StorageV1alpha1Interface {
	return c.storageV1alpha1()
}

// StoragemigrationV1 returns the StoragemigrationV1Client, made on the first call.
func (c *Clientset) StoragemigrationV1() storagemigrationv1.StoragemigrationV1Interface {
	return c.storagemigrationV1()
}

// StoragemigrationV1beta1 returns the StoragemigrationV1beta1Client, made on the first call.
func (c *Clientset) StoragemigrationV1beta1() storagemigrationv1beta1.StoragemigrationV1beta1Interface {
	return c.storagemigrationV1beta1()
}
