package etcd3

import (
	"reflect"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
)

// TestTxnOpsAsClientv3 checks that opPut and valueDiffers build the
// operations clientv3's OpPut and Compare build from the value as a
// string, but hold the caller's slice instead of copies of it.
func TestTxnOpsAsClientv3(t *testing.T) {
	k := "/registry/things/ns/a"
	data := []byte(`{"apiVersion":"v1","kind":"Thing","metadata":{"name":"a"}}`)
	for _, opts := range [][]clientv3.OpOption{nil, {clientv3.WithLease(42)}} {
		got, want := opPut(k, data, opts...), clientv3.OpPut(k, string(data), opts...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("opPut = %+v, want %+v", got, want)
		}
		if v := got.ValueBytes(); len(v) == 0 || &v[0] != &data[0] {
			t.Error("opPut copied the value")
		}
	}
	got, want := valueDiffers(k, data), clientv3.Compare(clientv3.Value(k), "!=", string(data))
	if !proto.Equal(got.GetCompare(), want.GetCompare()) {
		t.Errorf("valueDiffers = %v, want %v", got.GetCompare(), want.GetCompare())
	}
	if v := got.ValueBytes(); len(v) == 0 || &v[0] != &data[0] {
		t.Error("valueDiffers copied the value")
	}
}
