package memory

import "github.com/kapi-dev/kapi/pkg/endpoints/handlers"

// The watch handler encodes a watcher's plain event objects in place,
// without copying them (see ExclusiveEventObjects).
var _ handlers.ExclusiveEvents = (*watcher)(nil)
