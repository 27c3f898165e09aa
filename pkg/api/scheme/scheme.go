// Package scheme holds the runtime.Scheme kapi serves built-in types from:
// every group-version of k8s.io/api plus meta.k8s.io, and the codecs
// (JSON, YAML, protobuf) and parameter codec built on it.
package scheme

import (
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	conversionautoscaling "github.com/kapi-dev/kapi/pkg/api/conversion/autoscaling"
	conversionpolicy "github.com/kapi-dev/kapi/pkg/api/conversion/policy"
	defaultsadmissionregistrationv1 "github.com/kapi-dev/kapi/pkg/api/defaults/admissionregistrationv1"
	defaultsappsv1 "github.com/kapi-dev/kapi/pkg/api/defaults/appsv1"
	defaultsauthenticationv1 "github.com/kapi-dev/kapi/pkg/api/defaults/authenticationv1"
	defaultsautoscalingv1 "github.com/kapi-dev/kapi/pkg/api/defaults/autoscalingv1"
	defaultsautoscalingv2 "github.com/kapi-dev/kapi/pkg/api/defaults/autoscalingv2"
	defaultsbatchv1 "github.com/kapi-dev/kapi/pkg/api/defaults/batchv1"
	defaultscertificatesv1 "github.com/kapi-dev/kapi/pkg/api/defaults/certificatesv1"
	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	defaultsflowcontrolv1 "github.com/kapi-dev/kapi/pkg/api/defaults/flowcontrolv1"
	defaultsnetworkingv1 "github.com/kapi-dev/kapi/pkg/api/defaults/networkingv1"
	defaultsrbacv1 "github.com/kapi-dev/kapi/pkg/api/defaults/rbacv1"
	defaultsresourcev1 "github.com/kapi-dev/kapi/pkg/api/defaults/resourcev1"
	defaultsschedulingv1 "github.com/kapi-dev/kapi/pkg/api/defaults/schedulingv1"
	defaultsstoragev1 "github.com/kapi-dev/kapi/pkg/api/defaults/storagev1"
)

// Scheme knows every built-in kind kapi may serve.
var Scheme = runtime.NewScheme()

// Codecs encodes and decodes built-in objects in every wire format.
var Codecs = serializer.NewCodecFactory(Scheme)

// ParameterCodec decodes query parameters into option structs
// (metav1.GetOptions, metav1.CreateOptions, ... and
// metainternalversion.ListOptions).
var ParameterCodec = runtime.NewParameterCodec(Scheme)

// Unversioned is the group-version of kinds served in every group
// (Status, APIVersions, APIGroupList, ...).
var Unversioned = schema.GroupVersion{Group: "", Version: "v1"}

func init() {
	// All of k8s.io/api's group-versions (the client-go scheme registers
	// exactly those) and meta/v1 options in each.
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(metainternalversion.AddToScheme(Scheme))
	utilruntime.Must(metav1beta1.AddMetaToScheme(Scheme))
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	Scheme.AddUnversionedTypes(Unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)
	// kube-apiserver's defaulting, applied by the codecs' decoders (request
	// bodies, patches, storage reads): one line per group-version.
	utilruntime.Must(defaultscorev1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultscorev1.RegisterOtherDefaults(Scheme))
	utilruntime.Must(defaultsappsv1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsbatchv1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsautoscalingv1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsautoscalingv2.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsnetworkingv1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsstoragev1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsschedulingv1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsflowcontrolv1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsadmissionregistrationv1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsrbacv1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsresourcev1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsresourcev1.RegisterDeviceTaintRuleDefaults(Scheme))
	utilruntime.Must(defaultscertificatesv1.RegisterDefaults(Scheme))
	utilruntime.Must(defaultsauthenticationv1.RegisterDefaults(Scheme))
	// autoscaling/v1 and v2 HorizontalPodAutoscalers convert into each other
	// (one storage, two served versions).
	utilruntime.Must(conversionautoscaling.RegisterConversions(Scheme))
	// A policy/v1beta1 Eviction body is decoded into the served policy/v1.
	utilruntime.Must(conversionpolicy.RegisterConversions(Scheme))
}
