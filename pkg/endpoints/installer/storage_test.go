package installer

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// The test storages below are small, map-backed rest implementations: the
// handlers are tested against them, not against the generic store.

var configMapsGR = schema.GroupResource{Resource: "configmaps"}

// cmStore is a namespaced ConfigMap storage with watch.
type cmStore struct {
	mu       sync.Mutex
	rv       int64
	items    map[string]*corev1.ConfigMap // ns/name
	watchers map[*cmWatcher]bool
}

func newCMStore() *cmStore {
	return &cmStore{items: map[string]*corev1.ConfigMap{}, watchers: map[*cmWatcher]bool{}}
}

var (
	_ rest.Getter             = (*cmStore)(nil)
	_ rest.Lister             = (*cmStore)(nil)
	_ rest.Watcher            = (*cmStore)(nil)
	_ rest.Creater            = (*cmStore)(nil)
	_ rest.Updater            = (*cmStore)(nil)
	_ rest.Patcher            = (*cmStore)(nil)
	_ rest.GracefulDeleter    = (*cmStore)(nil)
	_ rest.CollectionDeleter  = (*cmStore)(nil)
	_ rest.Scoper             = (*cmStore)(nil)
	_ rest.ShortNamesProvider = (*cmStore)(nil)
)

func (s *cmStore) New() runtime.Object     { return &corev1.ConfigMap{} }
func (s *cmStore) NewList() runtime.Object { return &corev1.ConfigMapList{} }
func (s *cmStore) Destroy()                {}
func (s *cmStore) NamespaceScoped() bool   { return true }
func (s *cmStore) GetSingularName() string { return "configmap" }
func (s *cmStore) ShortNames() []string    { return []string{"cm"} }

func key(ns, name string) string { return ns + "/" + name }

func isDryRun(dryRun []string) bool { return len(dryRun) > 0 }

func (s *cmStore) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cm, ok := s.items[key(request.NamespaceFrom(ctx), name)]
	if !ok {
		return nil, apierrors.NewNotFound(configMapsGR, name)
	}
	return cm.DeepCopy(), nil
}

func matches(cm *corev1.ConfigMap, ns string, opts *metainternalversion.ListOptions) bool {
	if ns != "" && cm.Namespace != ns {
		return false
	}
	if opts == nil {
		return true
	}
	if opts.LabelSelector != nil && !opts.LabelSelector.Matches(labels.Set(cm.Labels)) {
		return false
	}
	if opts.FieldSelector != nil && !opts.FieldSelector.Matches(fields.Set{"metadata.name": cm.Name, "metadata.namespace": cm.Namespace}) {
		return false
	}
	return true
}

func (s *cmStore) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listLocked(request.NamespaceFrom(ctx), opts), nil
}

func (s *cmStore) listLocked(ns string, opts *metainternalversion.ListOptions) *corev1.ConfigMapList {
	list := &corev1.ConfigMapList{}
	list.ResourceVersion = strconv.FormatInt(s.rv, 10)
	keys := make([]string, 0, len(s.items))
	for k := range s.items {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if cm := s.items[k]; matches(cm, ns, opts) {
			list.Items = append(list.Items, *cm.DeepCopy())
		}
	}
	return list
}

func (s *cmStore) ConvertToTable(_ context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	t := &metav1.Table{}
	if to, ok := opts.(*metav1.TableOptions); !ok || !to.NoHeaders {
		t.ColumnDefinitions = []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name"},
			{Name: "Data", Type: "string"},
			{Name: "Age", Type: "string"},
		}
	}
	add := func(cm *corev1.ConfigMap) {
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []any{cm.Name, int64(len(cm.Data)), "<unknown>"},
			Object: runtime.RawExtension{Object: cm},
		})
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		add(o)
		t.ResourceVersion = o.ResourceVersion
	case *corev1.ConfigMapList:
		for i := range o.Items {
			add(&o.Items[i])
		}
		t.ResourceVersion = o.ResourceVersion
	default:
		return nil, fmt.Errorf("cannot convert %T to a table", obj)
	}
	return t, nil
}

func (s *cmStore) broadcastLocked(ev watch.Event) {
	cm, _ := ev.Object.(*corev1.ConfigMap)
	for w := range s.watchers {
		if cm != nil && !matches(cm, w.ns, w.opts) {
			continue
		}
		select {
		case w.ch <- watch.Event{Type: ev.Type, Object: ev.Object.DeepCopyObject()}:
		default: // a slow test watcher loses events; tests read promptly
		}
	}
}

// sendError sends an ERROR event to every watcher.
func (s *cmStore) sendError(status *metav1.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broadcastLocked(watch.Event{Type: watch.Error, Object: status})
}

// activeWatchers counts the watches not yet stopped.
func (s *cmStore) activeWatchers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}

func (s *cmStore) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	cm := obj.(*corev1.ConfigMap).DeepCopy()
	if cm.Name == "" && cm.GenerateName != "" {
		cm.Name = cm.GenerateName + "x1"
	}
	if cm.Name == "" {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "", nil)
	}
	if err := validate(ctx, cm); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(cm.Namespace, cm.Name)
	if _, ok := s.items[k]; ok {
		return nil, apierrors.NewAlreadyExists(configMapsGR, cm.Name)
	}
	if isDryRun(opts.DryRun) {
		return cm, nil
	}
	s.rv++
	cm.ResourceVersion = strconv.FormatInt(s.rv, 10)
	cm.UID = types.UID(fmt.Sprintf("uid-%d", s.rv))
	cm.CreationTimestamp = metav1.NewTime(time.Unix(1700000000, 0))
	s.items[k] = cm
	s.broadcastLocked(watch.Event{Type: watch.Added, Object: cm})
	return cm.DeepCopy(), nil
}

func (s *cmStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc,
	_ rest.ValidateObjectUpdateFunc, _ bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(request.NamespaceFrom(ctx), name)
	old, ok := s.items[k]
	if !ok {
		if _, err := objInfo.UpdatedObject(ctx, nil); err != nil {
			return nil, false, err
		}
		return nil, false, apierrors.NewNotFound(configMapsGR, name)
	}
	newObj, err := objInfo.UpdatedObject(ctx, old.DeepCopy())
	if err != nil {
		return nil, false, err
	}
	cm := newObj.(*corev1.ConfigMap)
	if cm.ResourceVersion != "" && cm.ResourceVersion != old.ResourceVersion {
		return nil, false, apierrors.NewConflict(configMapsGR, name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	cm.UID, cm.CreationTimestamp, cm.Namespace = old.UID, old.CreationTimestamp, old.Namespace
	if isDryRun(opts.DryRun) {
		return cm, false, nil
	}
	s.rv++
	cm.ResourceVersion = strconv.FormatInt(s.rv, 10)
	s.items[k] = cm
	s.broadcastLocked(watch.Event{Type: watch.Modified, Object: cm})
	return cm.DeepCopy(), false, nil
}

func (s *cmStore) Delete(ctx context.Context, name string, _ rest.ValidateObjectFunc, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleteLocked(request.NamespaceFrom(ctx), name, opts)
}

func (s *cmStore) deleteLocked(ns, name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	k := key(ns, name)
	cm, ok := s.items[k]
	if !ok {
		return nil, false, apierrors.NewNotFound(configMapsGR, name)
	}
	if opts.Preconditions != nil && opts.Preconditions.UID != nil && *opts.Preconditions.UID != cm.UID {
		return nil, false, apierrors.NewConflict(configMapsGR, name, fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", *opts.Preconditions.UID, cm.UID))
	}
	if isDryRun(opts.DryRun) {
		return cm.DeepCopy(), true, nil
	}
	if len(cm.Finalizers) > 0 {
		if cm.DeletionTimestamp == nil {
			now := metav1.NewTime(time.Unix(1700000100, 0))
			cm = cm.DeepCopy()
			cm.DeletionTimestamp = &now
			s.rv++
			cm.ResourceVersion = strconv.FormatInt(s.rv, 10)
			s.items[k] = cm
			s.broadcastLocked(watch.Event{Type: watch.Modified, Object: cm})
		}
		return cm.DeepCopy(), false, nil
	}
	delete(s.items, k)
	s.rv++
	gone := cm.DeepCopy()
	gone.ResourceVersion = strconv.FormatInt(s.rv, 10)
	s.broadcastLocked(watch.Event{Type: watch.Deleted, Object: gone})
	return gone, true, nil
}

func (s *cmStore) DeleteCollection(ctx context.Context, _ rest.ValidateObjectFunc, opts *metav1.DeleteOptions,
	listOpts *metainternalversion.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.listLocked(request.NamespaceFrom(ctx), listOpts)
	out := &corev1.ConfigMapList{}
	for _, cm := range list.Items {
		obj, _, err := s.deleteLocked(cm.Namespace, cm.Name, opts)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *obj.(*corev1.ConfigMap))
	}
	out.ResourceVersion = strconv.FormatInt(s.rv, 10)
	return out, nil
}

func (s *cmStore) Watch(ctx context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error) {
	if opts.ResourceVersion == "1" {
		return nil, apierrors.NewResourceExpired("too old resource version: 1 (2)")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &cmWatcher{store: s, ns: request.NamespaceFrom(ctx), opts: opts, ch: make(chan watch.Event, 100)}
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents && (opts.ResourceVersion == "" || opts.ResourceVersion == "0") {
		for _, cm := range s.listLocked(w.ns, opts).Items {
			w.ch <- watch.Event{Type: watch.Added, Object: cm.DeepCopy()}
		}
		if opts.AllowWatchBookmarks {
			bm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				ResourceVersion: strconv.FormatInt(s.rv, 10),
				Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
			}}
			w.ch <- watch.Event{Type: watch.Bookmark, Object: bm}
		}
	}
	s.watchers[w] = true
	return w, nil
}

type cmWatcher struct {
	store *cmStore
	ns    string
	opts  *metainternalversion.ListOptions
	ch    chan watch.Event
	once  sync.Once
}

func (w *cmWatcher) ResultChan() <-chan watch.Event { return w.ch }

func (w *cmWatcher) Stop() {
	w.once.Do(func() {
		w.store.mu.Lock()
		delete(w.store.watchers, w)
		w.store.mu.Unlock()
	})
}

// statusStore is a configmaps/status subresource: get and update only.
type statusStore struct{ cms *cmStore }

func (s *statusStore) New() runtime.Object { return &corev1.ConfigMap{} }
func (s *statusStore) Destroy()            {}
func (s *statusStore) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	return s.cms.Get(ctx, name, opts)
}
func (s *statusStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, cv rest.ValidateObjectFunc,
	uv rest.ValidateObjectUpdateFunc, force bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return s.cms.Update(ctx, name, objInfo, cv, uv, force, opts)
}

// nsStore is a read-only cluster-scoped namespace storage.
type nsStore struct{}

func (nsStore) New() runtime.Object     { return &corev1.Namespace{} }
func (nsStore) NewList() runtime.Object { return &corev1.NamespaceList{} }
func (nsStore) Destroy()                {}
func (nsStore) NamespaceScoped() bool   { return false }
func (nsStore) ShortNames() []string    { return []string{"ns"} }
func (nsStore) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if ns := request.NamespaceFrom(ctx); ns != "" {
		return nil, fmt.Errorf("namespace %q on the context of a cluster-scoped get", ns)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "5"}}, nil
}
func (nsStore) List(context.Context, *metainternalversion.ListOptions) (runtime.Object, error) {
	return &corev1.NamespaceList{Items: []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}}}, nil
}
func (nsStore) ConvertToTable(context.Context, runtime.Object, runtime.Object) (*metav1.Table, error) {
	return &metav1.Table{}, nil
}
