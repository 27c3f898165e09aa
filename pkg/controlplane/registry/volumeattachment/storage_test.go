package volumeattachment

import (
	"slices"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

const dns1123 = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

// TestValidationAsDeclarative checks whole error lists, order and words,
// against kube-apiserver v1.37.2, where beta declarative rules
// (k8s.io/kubernetes@v1.37.2 pkg/apis/storage/v1/zz_generated.validations.go)
// answer spec.attacher on create (+k8s:required,
// +k8s:format=k8s-long-name-caseless, +k8s:maxLength=63: after the other
// errors, format before length, in characters) and the spec's
// immutability on update ("Invalid value: null"), which stops the
// declarative walk of the spec, so the attacher's handwritten error stays
// then. The want lists are kube-apiserver v1.37.2's answers to the same
// requests (kubectl create/replace --raw, 2026-11-27).
func TestValidationAsDeclarative(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("storage.k8s.io", "v1", "volumeattachments", "")
	long := "EBS_CSI." + strings.Repeat("a", 70)
	for _, c := range []struct {
		name string
		spec storagev1.VolumeAttachmentSpec
		want []string
	}{{
		name: "bad attacher, node and source",
		spec: storagev1.VolumeAttachmentSpec{Attacher: long, NodeName: "Node_1"},
		want: []string{
			`spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName`,
			`spec.nodeName: Invalid value: "Node_1": ` + dns1123,
			`spec.attacher: Invalid value: "` + long + `": an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'Example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			`spec.attacher: Too long: may not be more than 63 characters`,
		},
	}, {
		name: "no attacher, bad PV name",
		spec: storagev1.VolumeAttachmentSpec{NodeName: "n", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("Bad_PV")}},
		want: []string{
			`spec.source.persistentVolumeName: Invalid value: "Bad_PV": ` + dns1123,
			`spec.attacher: Required value`,
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "dv12-va"}, Spec: c.spec}
			_, err := store.Create(ctx, va, nil, &metav1.CreateOptions{})
			if got := registrytest.Messages(t, err); !slices.Equal(got, c.want) {
				t.Errorf("causes:\n got  %q\n want %q", got, c.want)
			}
		})
	}

	ok := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "dv12-va3"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "Ebs.CSI", NodeName: "n", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv")}}}
	if _, err := store.Create(ctx, ok, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatalf("a mixed-case attacher is a caseless DNS subdomain: %v", err)
	}
	_, _, err = store.Update(ctx, "dv12-va3", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*storagev1.VolumeAttachment).Spec.Attacher = "EBS_CSI"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	want := []string{`spec.attacher: Invalid value: "EBS_CSI": ` + dns1123, `spec: Invalid value: null: field is immutable`}
	if got := registrytest.Messages(t, err); !slices.Equal(got, want) {
		t.Errorf("update causes:\n got  %q\n want %q", got, want)
	}
	_, _, err = status.Update(ctx, "dv12-va3", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*storagev1.VolumeAttachment).Status.AttachError = &storagev1.VolumeError{Message: strings.Repeat("x", 1030), ErrorCode: ptr.To[int32](-1)}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	want = []string{
		`status.attachError.message: Too long: may not be more than 1024 bytes`,
		`status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive`,
	}
	if got := registrytest.Messages(t, err); !slices.Equal(got, want) {
		t.Errorf("status update causes:\n got  %q\n want %q", got, want)
	}
}
