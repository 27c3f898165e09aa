package node

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Kind is the type of an object the graph relates to nodes.
type Kind int

// The kinds of objects a node may be related to (upstream's vertex
// types, less node configmaps: Node.spec.configSource is no longer used).
const (
	Pod Kind = iota
	Secret
	ConfigMap
	PersistentVolumeClaim
	PersistentVolume
	ServiceAccount
	ResourceClaim
	VolumeAttachment
	ResourceSlice
)

var kindNames = map[Kind]string{
	Pod: "pod", Secret: "secret", ConfigMap: "configmap", PersistentVolumeClaim: "pvc",
	PersistentVolume: "pv", ServiceAccount: "serviceAccount", ResourceClaim: "resourceclaim",
	VolumeAttachment: "volumeattachment", ResourceSlice: "resourceslice",
}

func (k Kind) String() string { return kindNames[k] }

// key names a namespaced object (namespace "" for cluster-scoped ones).
type key struct{ namespace, name string }

// podRefs are the objects one bound pod references, all in its namespace.
type podRefs struct {
	node           string
	serviceAccount string
	secrets        []string
	configMaps     []string
	claims         []string // persistent volume claims
	resourceClaims []string
}

// pvRefs are what a persistent volume is bound to and references.
type pvRefs struct {
	claim   key // spec.claimRef; zero when unbound
	secrets []key
}

// Graph records which objects each node's pods reference. It is safe for
// concurrent use; the informer handlers (see Populate) write it and the
// authorizer reads it.
type Graph struct {
	mu         sync.RWMutex
	pods       map[key]*podRefs
	podsByNode map[string]map[key]*podRefs
	pvs        map[string]*pvRefs
	pvByClaim  map[key]string
	vaNode     map[string]string
	sliceNode  map[string]string
}

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{
		pods: map[key]*podRefs{}, podsByNode: map[string]map[key]*podRefs{},
		pvs: map[string]*pvRefs{}, pvByClaim: map[key]string{},
		vaNode: map[string]string{}, sliceNode: map[string]string{},
	}
}

// SetPod records a pod (replacing what was known of it). Pods not bound
// to a node relate to nothing, as upstream's graph ignores them.
func (g *Graph) SetPod(p *corev1.Pod) {
	k := key{p.Namespace, p.Name}
	var refs *podRefs
	if p.Spec.NodeName != "" {
		refs = podReferences(p)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePodLocked(k)
	if refs == nil {
		return
	}
	g.pods[k] = refs
	byNode := g.podsByNode[refs.node]
	if byNode == nil {
		byNode = map[key]*podRefs{}
		g.podsByNode[refs.node] = byNode
	}
	byNode[k] = refs
}

// DeletePod forgets a pod.
func (g *Graph) DeletePod(namespace, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePodLocked(key{namespace, name})
}

func (g *Graph) deletePodLocked(k key) {
	old := g.pods[k]
	if old == nil {
		return
	}
	delete(g.pods, k)
	if byNode := g.podsByNode[old.node]; byNode != nil {
		delete(byNode, k)
		if len(byNode) == 0 {
			delete(g.podsByNode, old.node)
		}
	}
}

// SetPersistentVolume records a persistent volume's claim and secrets.
func (g *Graph) SetPersistentVolume(pv *corev1.PersistentVolume) {
	refs := &pvRefs{secrets: pvSecrets(pv)}
	if c := pv.Spec.ClaimRef; c != nil {
		refs.claim = key{c.Namespace, c.Name}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePVLocked(pv.Name)
	g.pvs[pv.Name] = refs
	if refs.claim != (key{}) {
		g.pvByClaim[refs.claim] = pv.Name
	}
}

// DeletePersistentVolume forgets a persistent volume.
func (g *Graph) DeletePersistentVolume(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePVLocked(name)
}

func (g *Graph) deletePVLocked(name string) {
	old := g.pvs[name]
	if old == nil {
		return
	}
	delete(g.pvs, name)
	if old.claim != (key{}) && g.pvByClaim[old.claim] == name {
		delete(g.pvByClaim, old.claim)
	}
}

// SetVolumeAttachment records the node a volume attachment is for.
func (g *Graph) SetVolumeAttachment(va *storagev1.VolumeAttachment) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if va.Spec.NodeName == "" {
		delete(g.vaNode, va.Name)
		return
	}
	g.vaNode[va.Name] = va.Spec.NodeName
}

// DeleteVolumeAttachment forgets a volume attachment.
func (g *Graph) DeleteVolumeAttachment(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.vaNode, name)
}

// SetResourceSlice records the node a resource slice belongs to.
func (g *Graph) SetResourceSlice(s *resourcev1.ResourceSlice) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
		delete(g.sliceNode, s.Name)
		return
	}
	g.sliceNode[s.Name] = *s.Spec.NodeName
}

// DeleteResourceSlice forgets a resource slice.
func (g *Graph) DeleteResourceSlice(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.sliceNode, name)
}

// Related reports whether the object of kind k named namespace/name is
// reachable from node: referenced by a pod bound to it (directly, or
// through a claim and its volume), or, for a volume attachment or a
// resource slice, naming it.
func (g *Graph) Related(node string, k Kind, namespace, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	switch k {
	case VolumeAttachment:
		return g.vaNode[name] == node
	case ResourceSlice:
		return g.sliceNode[name] == node
	case Pod:
		p := g.pods[key{namespace, name}]
		return p != nil && p.node == node
	}
	for pk, p := range g.podsByNode[node] {
		switch k {
		case ServiceAccount:
			if pk.namespace == namespace && p.serviceAccount == name {
				return true
			}
		case ConfigMap:
			if pk.namespace == namespace && slices.Contains(p.configMaps, name) {
				return true
			}
		case ResourceClaim:
			if pk.namespace == namespace && slices.Contains(p.resourceClaims, name) {
				return true
			}
		case PersistentVolumeClaim:
			if pk.namespace == namespace && slices.Contains(p.claims, name) {
				return true
			}
		case PersistentVolume:
			for _, c := range p.claims {
				if g.pvByClaim[key{pk.namespace, c}] == name {
					return true
				}
			}
		case Secret:
			if pk.namespace == namespace && slices.Contains(p.secrets, name) {
				return true
			}
			for _, c := range p.claims {
				if pv := g.pvs[g.pvByClaim[key{pk.namespace, c}]]; pv != nil && slices.Contains(pv.secrets, key{namespace, name}) {
					return true
				}
			}
		}
	}
	return false
}
