package componentstatus

import (
	"context"
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/registry/table"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// Resource is the resource served.
var Resource = corev1.Resource("componentstatuses")

// Upstream's components besides storage: the scheduler and the controller
// manager at their default secure ports on the local host.
const (
	SchedulerURL         = "https://127.0.0.1:10259/healthz"
	ControllerManagerURL = "https://127.0.0.1:10257/healthz"
)

// DefaultServers are upstream's components: the scheduler and the
// controller manager at their default secure ports, and one etcd-<n> per
// storage health check given.
func DefaultServers(storageHealth ...func(context.Context) error) map[string]Server {
	out := map[string]Server{
		"scheduler":          NewHTTPServer(SchedulerURL, true),
		"controller-manager": NewHTTPServer(ControllerManagerURL, true),
	}
	for i, h := range storageHealth {
		out["etcd-"+strconv.Itoa(i)] = StorageServer{Health: h}
	}
	return out
}

// DeprecationWarning is the warning upstream sends with every response
// about componentstatuses (the API has been deprecated since v1.19).
const DeprecationWarning = "v1 ComponentStatus is deprecated in v1.19+"

// REST serves componentstatuses: get and list, each probing the
// components live.
type REST struct {
	servers map[string]Server
}

var (
	_ rest.Storage              = (*REST)(nil)
	_ rest.Scoper               = (*REST)(nil)
	_ rest.Getter               = (*REST)(nil)
	_ rest.Lister               = (*REST)(nil)
	_ rest.SingularNameProvider = (*REST)(nil)
	_ rest.ShortNamesProvider   = (*REST)(nil)
)

// NewREST returns the componentstatuses resource reporting servers
// (name to component).
func NewREST(servers map[string]Server) *REST {
	return &REST{servers: servers}
}

// New implements rest.Storage.
func (*REST) New() runtime.Object { return &corev1.ComponentStatus{} }

// Destroy implements rest.Storage: nothing is held.
func (*REST) Destroy() {}

// NamespaceScoped implements rest.Scoper: false.
func (*REST) NamespaceScoped() bool { return false }

// GetSingularName implements rest.SingularNameProvider.
func (*REST) GetSingularName() string { return "componentstatus" }

// ShortNames implements rest.ShortNamesProvider: cs.
func (*REST) ShortNames() []string { return []string{"cs"} }

// NewList implements rest.Lister.
func (*REST) NewList() runtime.Object { return &corev1.ComponentStatusList{} }

// Get implements rest.Getter: the named component, probed now, with the
// deprecation warning. An unknown
// name is 404 NotFound (upstream answers 500 with "Component not found";
// kapi never answers a bad name with a server error).
func (r *REST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	warning.AddWarning(ctx, DeprecationWarning)
	s, ok := r.servers[name]
	if !ok {
		return nil, apierrors.NewNotFound(Resource, name)
	}
	return status(ctx, name, s), nil
}

// List implements rest.Lister: with the deprecation warning, every
// component, probed concurrently,
// sorted by name, filtered by the label and field selectors (components
// have no labels; their fields are metadata.name and metadata.namespace).
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	warning.AddWarning(ctx, DeprecationWarning)
	names := make([]string, 0, len(r.servers))
	for name := range r.servers {
		names = append(names, name)
	}
	slices.Sort(names)
	items := make([]corev1.ComponentStatus, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { items[i] = *status(ctx, name, r.servers[name]) })
	}
	wg.Wait()
	pred := storage.SelectionPredicate{GetAttrs: storage.DefaultAttrs}
	if options != nil {
		pred.Label, pred.Field = options.LabelSelector, options.FieldSelector
	}
	out := &corev1.ComponentStatusList{Items: []corev1.ComponentStatus{}}
	for i := range items {
		ok, err := pred.Matches(&items[i])
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if ok {
			out.Items = append(out.Items, items[i])
		}
	}
	return out, nil
}

// status probes s and reports it as component name.
func status(ctx context.Context, name string, s Server) *corev1.ComponentStatus {
	st, msg, err := s.Check(ctx)
	errMsg := ""
	if err != nil {
		errMsg = err.Error()
	}
	return &corev1.ComponentStatus{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Conditions: []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: st, Message: msg, Error: errMsg}},
	}
}

// ConvertToTable implements rest.TableConvertor.
func (*REST) ConvertToTable(ctx context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	return TableConvertor.ConvertToTable(ctx, object, tableOptions)
}

// TableConvertor renders components as upstream's printComponentStatus
// (kubernetes pkg/printers/internalversion/printers.go): NAME STATUS
// MESSAGE ERROR, STATUS Healthy, Unhealthy or Unknown (no Healthy
// condition).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Status", Type: "string", Description: "Status of the component conditions"},
		{Name: "Message", Type: "string", Description: "Message of the component conditions"},
		{Name: "Error", Type: "string", Description: "Error of the component conditions"},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		cs, ok := obj.(*corev1.ComponentStatus)
		if !ok {
			return nil, false
		}
		status, message, errMsg := "Unknown", "", ""
		for _, c := range cs.Conditions {
			if c.Type != corev1.ComponentHealthy {
				continue
			}
			status = "Unhealthy"
			if c.Status == corev1.ConditionTrue {
				status = "Healthy"
			}
			message, errMsg = c.Message, c.Error
			break
		}
		return []any{cs.Name, status, message, errMsg}, true
	},
}
