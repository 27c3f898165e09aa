package pod

import (
	"context"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

func requestInfo(ctx context.Context) (*request.RequestInfo, bool) {
	return request.RequestInfoFrom(ctx)
}
