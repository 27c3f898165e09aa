package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/certificates"
	"github.com/kapi-dev/kapi/pkg/admission/defaultingressclass"
	"github.com/kapi-dev/kapi/pkg/admission/defaultstorageclass"
	"github.com/kapi-dev/kapi/pkg/admission/defaulttolerationseconds"
	"github.com/kapi-dev/kapi/pkg/admission/limitranger"
	"github.com/kapi-dev/kapi/pkg/admission/namespacelifecycle"
	"github.com/kapi-dev/kapi/pkg/admission/nodedeclaredfeatures"
	"github.com/kapi-dev/kapi/pkg/admission/noderestriction"
	"github.com/kapi-dev/kapi/pkg/admission/podresize"
	"github.com/kapi-dev/kapi/pkg/admission/podsecurity"
	"github.com/kapi-dev/kapi/pkg/admission/podtopologylabels"
	"github.com/kapi-dev/kapi/pkg/admission/priority"
	"github.com/kapi-dev/kapi/pkg/admission/pvcresize"
	"github.com/kapi-dev/kapi/pkg/admission/runtimeclass"
	"github.com/kapi-dev/kapi/pkg/admission/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/admission/storageobjectinuseprotection"
	"github.com/kapi-dev/kapi/pkg/admission/taintnodesbycondition"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
)

// AllOrderedPlugins is every admission plugin name kube-apiserver knows,
// in the fixed order the enabled ones run in, whatever order the flags
// name them. Source: kubernetes/kubernetes
// pkg/kubeapiserver/options/plugins.go AllOrderedPlugins, v1.37.2 (the
// development line's PodGroupWorkloadExists and JobValidation are not in
// the release).
var AllOrderedPlugins = []string{
	"AlwaysAdmit",
	"NamespaceAutoProvision",
	"NamespaceLifecycle",
	"NamespaceExists",
	"LimitPodHardAntiAffinityTopology",
	"LimitRanger",
	"ServiceAccount",
	"NodeRestriction",
	"TaintNodesByCondition",
	"AlwaysPullImages",
	"ImagePolicyWebhook",
	"PodSecurity",
	"PodNodeSelector",
	"Priority",
	"DefaultTolerationSeconds",
	"PodTolerationRestriction",
	"EventRateLimit",
	"ExtendedResourceToleration",
	"DefaultStorageClass",
	"StorageObjectInUseProtection",
	"PodGroupProtection",
	"OwnerReferencesPermissionEnforcement",
	"PersistentVolumeClaimResize",
	"RuntimeClass",
	"CertificateApproval",
	"CertificateSigning",
	"ClusterTrustBundleAttest",
	"CertificateSubjectRestriction",
	"DefaultIngressClass",
	"DenyServiceExternalIPs",
	"PodTopologyLabels",
	"NodeDeclaredFeatureValidator",
	"PodResizeValidator",
	// Webhooks, policies, quota and deny go last, as upstream.
	"MutatingAdmissionPolicy",
	"MutatingAdmissionWebhook",
	"ValidatingAdmissionPolicy",
	"ValidatingAdmissionWebhook",
	"ResourceQuota",
	"AlwaysDeny",
}

// DefaultOnPlugins are the plugins kube-apiserver enables when the flags do
// not say otherwise. Source: the same file's DefaultOffAdmissionPlugins
// (its defaultOnPlugins set).
var DefaultOnPlugins = []string{
	"NamespaceLifecycle",
	"LimitRanger",
	"ServiceAccount",
	"DefaultStorageClass",
	"PersistentVolumeClaimResize",
	"DefaultTolerationSeconds",
	"MutatingAdmissionWebhook",
	"ValidatingAdmissionWebhook",
	"ResourceQuota",
	"StorageObjectInUseProtection",
	"PodGroupProtection",
	"Priority",
	"TaintNodesByCondition",
	"RuntimeClass",
	"CertificateApproval",
	"CertificateSigning",
	"ClusterTrustBundleAttest",
	"CertificateSubjectRestriction",
	"DefaultIngressClass",
	"PodSecurity",
	"PodTopologyLabels",
	"MutatingAdmissionPolicy",
	"ValidatingAdmissionPolicy",
	"NodeDeclaredFeatureValidator",
	"PodResizeValidator",
}

// Reader reads objects of one resource, bypassing authentication,
// authorization and admission (as upstream plugins read through informers
// and a loopback client). namespace is "" for cluster-scoped resources.
type Reader interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
	List(ctx context.Context, namespace string) (runtime.Object, error)
}

// Deps are what plugins are built from. Fields are added as plugins need
// them (webhooks: a Service resolver, ...).
type Deps struct {
	Logger *slog.Logger
	// Namespaces, ServiceAccounts and LimitRanges read those
	// resources. A nil Reader makes the plugins that need it unavailable.
	Namespaces      Reader
	ServiceAccounts Reader
	LimitRanges     Reader
	// Pods reads pods (PodSecurity checks a namespace's pods when its
	// enforce level changes; nil: it does not).
	Pods Reader
	// Nodes reads nodes (NodeRestriction checks a mirror pod's owner;
	// nil: it is unavailable, as without Pods).
	Nodes Reader
	// PriorityClasses and StorageClasses read scheduling.k8s.io and
	// storage.k8s.io classes; nil (not served yet) makes Priority and
	// DefaultStorageClass unavailable.
	PriorityClasses Reader
	StorageClasses  Reader
	// RuntimeClasses and IngressClasses read node.k8s.io and
	// networking.k8s.io classes (RuntimeClass, DefaultIngressClass).
	RuntimeClasses Reader
	IngressClasses Reader
	// PodSecurityMetrics receives PodSecurity's pod_security_* metrics
	// (nil: none).
	PodSecurityMetrics *podsecurity.Metrics
	// Prebuilt are plugins the server builds itself, by name (webhooks and
	// admission policies, which need the server's hooks and clients, and
	// ResourceQuota, which writes quota status through the store);
	// missing ones are unavailable.
	Prebuilt map[string]admission.Plugin
	// DefaultNotReadyTolerationSeconds and
	// DefaultUnreachableTolerationSeconds configure DefaultTolerationSeconds
	// (--default-not-ready-toleration-seconds,
	// --default-unreachable-toleration-seconds; upstream's default is
	// defaulttolerationseconds.DefaultSeconds).
	DefaultNotReadyTolerationSeconds    int64
	DefaultUnreachableTolerationSeconds int64
	// Authorizer is the server's authorizer, for the plugins that ask it
	// (the certificate plugins, as upstream's WantsAuthorizer); nil makes
	// them unavailable.
	Authorizer authorizer.Authorizer
}

// Constructor builds a plugin from its dependencies and its configuration
// (the JSON of its AdmissionConfiguration entry; nil when none is given).
type Constructor func(d Deps, config []byte) (admission.Plugin, error)

// constructors are the plugins kapi implements. One line per plugin.
var constructors = map[string]Constructor{
	namespacelifecycle.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		return namespacelifecycle.New(getterOf{d.Namespaces}), nil
	},
	limitranger.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		return limitranger.New(d.LimitRanges), nil
	},
	podsecurity.PluginName: func(d Deps, c []byte) (admission.Plugin, error) {
		if d.Namespaces == nil {
			return nil, ErrUnavailable
		}
		p, err := podsecurity.New(c, d.Namespaces, d.Pods)
		if err != nil {
			return nil, err
		}
		p.SetMetrics(d.PodSecurityMetrics)
		return p, nil
	},
	serviceaccount.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		return serviceaccount.New(d.ServiceAccounts), nil
	},
	taintnodesbycondition.PluginName: func(Deps, []byte) (admission.Plugin, error) {
		return taintnodesbycondition.New(), nil
	},
	defaulttolerationseconds.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		return defaulttolerationseconds.New(d.DefaultNotReadyTolerationSeconds, d.DefaultUnreachableTolerationSeconds), nil
	},
	storageobjectinuseprotection.PluginName: func(Deps, []byte) (admission.Plugin, error) {
		return storageobjectinuseprotection.New(), nil
	},
	priority.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		if d.PriorityClasses == nil {
			return nil, ErrUnavailable
		}
		return priority.New(d.PriorityClasses), nil
	},
	podtopologylabels.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		if d.Nodes == nil {
			return nil, ErrUnavailable
		}
		return podtopologylabels.New(d.Nodes), nil
	},
	nodedeclaredfeatures.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		if d.Nodes == nil {
			return nil, ErrUnavailable
		}
		return nodedeclaredfeatures.New(d.Nodes), nil
	},
	podresize.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		if d.Nodes == nil {
			return nil, ErrUnavailable
		}
		return podresize.New(d.Nodes), nil
	},
	noderestriction.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		if d.Pods == nil || d.Nodes == nil {
			return nil, ErrUnavailable
		}
		return noderestriction.New(d.Pods, d.Nodes), nil
	},
	certificates.ApprovalPluginName: withAuthorizer(func(a authorizer.Authorizer) admission.Plugin { return certificates.NewApproval(a) }),
	certificates.SigningPluginName:  withAuthorizer(func(a authorizer.Authorizer) admission.Plugin { return certificates.NewSigning(a) }),
	certificates.AttestPluginName:   withAuthorizer(func(a authorizer.Authorizer) admission.Plugin { return certificates.NewAttest(a) }),
	certificates.SubjectRestrictionPluginName: func(Deps, []byte) (admission.Plugin, error) {
		return certificates.NewSubjectRestriction(), nil
	},
	defaultstorageclass.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		if d.StorageClasses == nil {
			return nil, ErrUnavailable
		}
		return defaultstorageclass.New(d.StorageClasses), nil
	},
	pvcresize.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		if d.StorageClasses == nil {
			return nil, ErrUnavailable
		}
		return pvcresize.New(d.StorageClasses), nil
	},
	runtimeclass.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		if d.RuntimeClasses == nil {
			return nil, ErrUnavailable
		}
		return runtimeclass.New(d.RuntimeClasses), nil
	},
	defaultingressclass.PluginName: func(d Deps, _ []byte) (admission.Plugin, error) {
		if d.IngressClasses == nil {
			return nil, ErrUnavailable
		}
		return defaultingressclass.New(d.IngressClasses), nil
	},
}

// notApplicable are default-on upstream plugins kapi does not implement,
// with why: they act on what kubelets, schedulers or features kapi does
// not have. They are still reported, with the reason, when enabled.
var notApplicable = map[string]string{
	"PodGroupProtection": "guards scheduling.k8s.io PodGroups (gang scheduling, a feature-gated API) that kapi does not serve",
}

// withAuthorizer is the constructor of a plugin built from the
// authorizer alone (unavailable without one).
func withAuthorizer(build func(authorizer.Authorizer) admission.Plugin) Constructor {
	return func(d Deps, _ []byte) (admission.Plugin, error) {
		if d.Authorizer == nil {
			return nil, ErrUnavailable
		}
		return build(d.Authorizer), nil
	}
}

// Names of the plugins the server builds itself (Deps.Prebuilt).
const (
	MutatingAdmissionPolicy    = "MutatingAdmissionPolicy"
	MutatingAdmissionWebhook   = "MutatingAdmissionWebhook"
	ValidatingAdmissionPolicy  = "ValidatingAdmissionPolicy"
	ValidatingAdmissionWebhook = "ValidatingAdmissionWebhook"
	ResourceQuota              = "ResourceQuota"
)

func init() {
	for _, name := range []string{MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, ResourceQuota} {
		constructors[name] = func(d Deps, _ []byte) (admission.Plugin, error) {
			if p := d.Prebuilt[name]; p != nil {
				return p, nil
			}
			return nil, ErrUnavailable
		}
	}
}

// ErrUnavailable is returned by a constructor whose dependencies the
// server does not have (e.g. the resource it reads is not served).
var ErrUnavailable = errors.New("admission plugin not available")

// Implemented lists the plugin names kapi can build, sorted.
func Implemented() []string {
	names := make([]string, 0, len(constructors))
	for n := range constructors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ValidateNames checks --enable-admission-plugins and
// --disable-admission-plugins as upstream does
// (k8s.io/apiserver/pkg/server/options/admission.go Validate): every name
// must be one of AllOrderedPlugins, and no name may be in both lists.
func ValidateNames(enable, disable []string) []error {
	var errs []error
	for _, n := range enable {
		if !slices.Contains(AllOrderedPlugins, n) {
			errs = append(errs, fmt.Errorf("enable-admission-plugins plugin %q is unknown", n))
		}
	}
	for _, n := range disable {
		if !slices.Contains(AllOrderedPlugins, n) {
			errs = append(errs, fmt.Errorf("disable-admission-plugins plugin %q is unknown", n))
		}
	}
	var both []string
	for _, n := range enable {
		if slices.Contains(disable, n) && !slices.Contains(both, n) {
			both = append(both, n)
		}
	}
	if len(both) > 0 {
		sort.Strings(both)
		errs = append(errs, fmt.Errorf("%v in enable-admission-plugins and disable-admission-plugins overlapped", both))
	}
	return errs
}

// KapiDefaultOff are default-on upstream but off in kapi unless enabled.
// None now: StorageObjectInUseProtection (off until session 17) is on, its
// finalizers being removed by kapi's pvc-, pv- and vac-protection
// controllers as by kube-controller-manager's.
var KapiDefaultOff = []string{}

// EnabledNames is the plugins that run, in AllOrderedPlugins order: the
// default-on ones (except KapiDefaultOff) and those in enable, minus those
// in disable (as upstream's enabledPluginNames).
func EnabledNames(enable, disable []string) []string {
	var out []string
	for _, n := range AllOrderedPlugins {
		on := slices.Contains(DefaultOnPlugins, n) && !slices.Contains(KapiDefaultOff, n) && !slices.Contains(disable, n)
		if slices.Contains(enable, n) {
			on = true
		}
		if on {
			out = append(out, n)
		}
	}
	return out
}

// New builds the plugins named (in that order), giving each its entry of
// configs. Names kapi does not implement, or whose dependencies d lacks,
// are skipped and returned in unavailable, for the caller to log.
func New(names []string, configs Configs, d Deps) (plugins []admission.Plugin, unavailable []string, err error) {
	for _, n := range names {
		c, ok := constructors[n]
		if !ok {
			unavailable = append(unavailable, n)
			continue
		}
		p, err := c(d, configs[n])
		if errors.Is(err, ErrUnavailable) {
			unavailable = append(unavailable, n)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("admission plugin %q: %w", n, err)
		}
		plugins = append(plugins, p)
	}
	return plugins, unavailable, nil
}

// LogUnavailable logs the enabled plugins kapi does not implement.
func LogUnavailable(logger *slog.Logger, unavailable []string) {
	if len(unavailable) == 0 {
		return
	}
	if logger == nil {
		logger = slog.Default()
	}
	var missing []string
	for _, n := range unavailable {
		if why, ok := notApplicable[n]; ok {
			logger.Warn("admission plugin enabled but not applicable in kapi; it does not run", "plugin", n, "reason", why)
			continue
		}
		missing = append(missing, n)
	}
	if len(missing) > 0 {
		logger.Warn("admission plugins enabled but not available in kapi; they do not run", "plugins", strings.Join(missing, ","))
	}
}

// CachedReader is a Reader that can also answer from the server's watch
// cache: possibly a moment behind storage, but without a storage round
// trip (what upstream's plugins read from their informers).
type CachedReader interface {
	GetCached(ctx context.Context, namespace, name string) (runtime.Object, error)
}

// getterOf adapts a cluster-scoped Reader to the plugins that only Get. A
// Get at resourceVersion "0" is answered from the cache when the Reader
// has one.
type getterOf struct{ r Reader }

func (g getterOf) Get(ctx context.Context, name string, o *metav1.GetOptions) (runtime.Object, error) {
	if c, ok := g.r.(CachedReader); ok && o != nil && o.ResourceVersion == "0" {
		return c.GetCached(ctx, "", name)
	}
	return g.r.Get(ctx, "", name)
}

// Selection is which plugins a server runs and their configuration.
type Selection struct {
	// Names are the plugins, in order (see EnabledNames).
	Names []string
	// Configs are from --admission-control-config-file.
	Configs Configs
	// DefaultNotReadyTolerationSeconds and
	// DefaultUnreachableTolerationSeconds are DefaultTolerationSeconds'
	// flags.
	DefaultNotReadyTolerationSeconds    int64
	DefaultUnreachableTolerationSeconds int64
}
