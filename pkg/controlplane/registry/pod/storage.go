package pod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	validationcore "github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Resource is the resource served.
var Resource = corev1.Resource("pods")

// Storage is the pods resource and its subresources.
type Storage struct {
	Pod                 *generic.Store
	Status              *generic.StatusREST
	Binding             *BindingREST
	EphemeralContainers *generic.StatusREST
	Resize              *generic.StatusREST
	Log                 *LogREST
	Exec                rest.Connecter
	Attach              rest.Connecter
	PortForward         rest.Connecter
	Proxy               *ProxyREST
}

// Subresources returns the subresources by name, for the installer.
func (s *Storage) Subresources() map[string]rest.Storage {
	return map[string]rest.Storage{
		"status":              s.Status,
		"binding":             s.Binding,
		"ephemeralcontainers": s.EphemeralContainers,
		"resize":              s.Resize,
		"log":                 s.Log,
		"exec":                s.Exec,
		"attach":              s.Attach,
		"portforward":         s.PortForward,
		"proxy":               s.Proxy,
	}
}

// Config is what pods need besides registry options.
type Config struct {
	// Nodes, if set, is the nodes resource, where the connection
	// subresources find a pod's kubelet; without it every node is missing
	// (404 nodes "<name>" not found, as upstream for an unknown node).
	Nodes NodeGetter
}

// NewREST returns the pods resource (short name "po", category "all")
// and its subresources, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions, c Config) (*Storage, error) {
	store, err := generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.Pod{} },
		NewListFunc:               func() runtime.Object { return &corev1.PodList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("pod"),
		ResourceShortNames:        []string{"po"},
		ResourceCategories:        []string{"all"},
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		NameValidator:             validationcore.ValidatePodName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		DeleteStrategy:            Strategy,
		ReturnDeletedObject:       true,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, err
	}
	k := newKubelets(c.Nodes)
	conn := connecter{pods: store, kubelet: k}
	return &Storage{
		Pod:                 store,
		Status:              generic.NewStatusREST(store, StatusStrategy),
		Binding:             &BindingREST{pods: store},
		EphemeralContainers: generic.NewStatusREST(store, EphemeralContainersStrategy),
		Resize:              generic.NewStatusREST(store, ResizeStrategy),
		Log:                 &LogREST{conn},
		Exec:                &streamREST{connecter: conn, kind: "PodExecOptions", path: "exec", withContainer: true},
		Attach:              &streamREST{connecter: conn, kind: "PodAttachOptions", path: "attach", withContainer: true},
		PortForward:         &streamREST{connecter: conn, kind: "PodPortForwardOptions", path: "portForward"},
		Proxy:               &ProxyREST{conn},
	}, nil
}
