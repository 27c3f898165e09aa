package pod

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Expected cells: upstream's printPod (pkg/printers/internalversion,
// v1.37) and its printers_test.go cases.
func TestPodTable(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-10 * time.Minute))
	restarted := metav1.NewTime(time.Now().Add(-3 * time.Minute))
	pod := func(mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: created},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodPending},
		}
		mutate(p)
		return p
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	cases := []struct {
		name string
		pod  *corev1.Pod
		want []any
		cond bool
	}{
		{"pending", pod(func(*corev1.Pod) {}), []any{"p", "0/2", "Pending", "0", "10m", "<none>", "<none>", "<none>", "<none>"}, false},
		{"gated", pod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "SchedulingGated"}}
		}), []any{"p", "0/2", "SchedulingGated", "0", "10m", "<none>", "<none>", "<none>", "<none>"}, false},
		{"running, one ready, restarts", pod(func(p *corev1.Pod) {
			p.Spec.NodeName = "node-1"
			p.Status.Phase = corev1.PodRunning
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}}
			p.Status.NominatedNodeName = "node-2"
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/a"}, {ConditionType: "example.com/b"}}
			p.Status.Conditions = []corev1.PodCondition{{Type: "example.com/a", Status: corev1.ConditionTrue}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", Ready: true, State: running, RestartCount: 2, LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: restarted}}},
				{Name: "b", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
			}
		}), []any{"p", "1/2", "CrashLoopBackOff", "2 (3m ago)", "10m", "10.0.0.1", "node-1", "node-2", "1/2"}, false},
		{"init container", pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}, {Name: "i2"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "i1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
				{Name: "i2", State: running},
			}
		}), []any{"p", "0/2", "Init:1/2", "0", "10m", "<none>", "<none>", "<none>", "<none>"}, false},
		{"init container failed", pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}}}}
		}), []any{"p", "0/2", "Init:ExitCode:3", "0", "10m", "<none>", "<none>", "<none>", "<none>"}, false},
		{"sidecar counts", pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "s", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
			p.Status.Phase = corev1.PodRunning
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "s", Started: ptr.To(true), Ready: true, State: running}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", Ready: true, State: running}, {Name: "b", Ready: true, State: running}}
		}), []any{"p", "3/3", "Running", "0", "10m", "<none>", "<none>", "<none>", "<none>"}, false},
		{"completed but one running", pod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", Ready: true, State: running},
				{Name: "b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
			}
		}), []any{"p", "1/2", "NotReady", "0", "10m", "<none>", "<none>", "<none>", "<none>"}, false},
		{"succeeded", pod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}
		}), []any{"p", "0/2", "Completed", "0", "10m", "<none>", "<none>", "<none>", "<none>"}, true},
		{"terminating", pod(func(p *corev1.Pod) {
			p.DeletionTimestamp = &created
			p.Status.Phase = corev1.PodRunning
		}), []any{"p", "0/2", "Terminating", "0", "10m", "<none>", "<none>", "<none>", "<none>"}, false},
		{"evicted", pod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.Reason = "Evicted"
		}), []any{"p", "0/2", "Evicted", "0", "10m", "<none>", "<none>", "<none>", "<none>"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tbl, err := TableConvertor.ConvertToTable(context.Background(), c.pod, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tbl.ColumnDefinitions) != 9 || tbl.ColumnDefinitions[5].Priority != 1 || tbl.ColumnDefinitions[4].Priority != 0 {
				t.Fatalf("got columns %+v", tbl.ColumnDefinitions)
			}
			if diff := cmp.Diff(c.want, tbl.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
			if got := len(tbl.Rows[0].Conditions) == 1 && tbl.Rows[0].Conditions[0].Type == metav1.RowCompleted; got != c.cond {
				t.Errorf("got row conditions %+v, want completed=%v", tbl.Rows[0].Conditions, c.cond)
			}
		})
	}
	var names []string
	for _, c := range columns {
		names = append(names, fmt.Sprintf("%s/%d", c.Name, c.Priority))
	}
	want := []string{"Name/0", "Ready/0", "Status/0", "Restarts/0", "Age/0", "IP/1", "Node/1", "Nominated Node/1", "Readiness Gates/1"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
}
