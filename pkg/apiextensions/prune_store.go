package apiextensions

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
)

var (
	_ handlers.UnknownFieldPruner = (*crStore)(nil)
	_ handlers.DecodedDefaulter   = (*crStore)(nil)
)

// PruneUnknownFields implements handlers.UnknownFieldPruner: the write
// handlers prune what the version's schema does not declare before the
// field manager records managedFields.
func (s *crStore) PruneUnknownFields(obj runtime.Object) []string {
	return customresource.PruneUnknownFields(obj, s.schema)
}

// DefaultDecoded implements handlers.DecodedDefaulter: the version's
// schema defaults, as upstream's decoder applies them to a request body.
func (s *crStore) DefaultDecoded(obj runtime.Object) {
	customresource.DefaultDecoded(obj, s.schema)
}
