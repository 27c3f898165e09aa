package workload

import (
	"slices"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestContainerCells(t *testing.T) {
	names, images := ContainerCells([]corev1.Container{{Name: "a", Image: "x:1"}, {Name: "b", Image: "y"}})
	if names != "a,b" || images != "x:1,y" {
		t.Errorf("got %q %q, want a,b x:1,y", names, images)
	}
	if names, images := ContainerCells(nil); names != "" || images != "" {
		t.Errorf("got %q %q for no containers, want empty cells", names, images)
	}
}

// Upstream's printScale and its columns (printers.go, v1.37).
func TestScaleTable(t *testing.T) {
	s := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: metav1.NewTime(time.Now().Add(-3 * time.Hour))},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 3},
		Status:     autoscalingv1.ScaleStatus{Replicas: 1},
	}
	tbl, err := ScaleTableConvertor.ConvertToTable(t.Context(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name+":"+c.Type+":"+c.Format)
	}
	if want := []string{"Name:string:", "Desired:integer:", "Available:integer:", "Age:string:"}; !slices.Equal(cols, want) {
		t.Errorf("got columns %v, want %v", cols, want)
	}
	if got, want := tbl.Rows[0].Cells, []any{"web", int64(3), int64(1), "3h"}; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
}

// The paths are upstream's (pvcutil.GetWarningsForPersistentVolumeClaimSpec
// as the statefulset strategy calls it, v1.37).
func TestClaimTemplateWarnings(t *testing.T) {
	claims := []corev1.PersistentVolumeClaim{
		{Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
		{Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1500m")},
			Limits:   corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2.5")}}}},
	}
	want := []string{
		`spec.volumeClaimTemplates[1].resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`,
		`spec.volumeClaimTemplates[1].resources.limits[storage]: fractional byte value "2500m" is invalid, must be an integer`,
	}
	if got := ClaimTemplateWarnings(claims, false); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := ClaimTemplateWarnings(claims, true); len(got) != 2 || got[0][:len("spec.volumeClaimTemplates[1].Spec.resources")] != "spec.volumeClaimTemplates[1].Spec.resources" {
		t.Errorf("got %q on update, want upstream's .Spec. paths", got)
	}
}
