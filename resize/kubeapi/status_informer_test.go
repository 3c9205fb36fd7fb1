package kubeapi

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestUpdatePodStatusSendsNothingForTheStatusTheInformerShows: as the
// kubelet's status manager, the API sends nothing, not even a GET, for a
// status the informer's pod shows (the node hands it the status of every
// resync; needsReconcile); it reads the API server for any other status,
// and writes the same status again once another writer changed it and the
// informer shows that.
func TestUpdatePodStatusSendsNothingForTheStatusTheInformerShows(t *testing.T) {
	ctx := t.Context()
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "uid-1"},
		Spec:       v1.PodSpec{NodeName: "n", Containers: []v1.Container{{Name: "app", Image: "pause"}}},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}
	c := fake.NewClientset(p)
	a, err := New(ctx, c, "n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	gets := func() int {
		n := 0
		for _, act := range c.Actions() {
			if act.Matches("get", "pods") {
				n++
			}
		}
		return n
	}
	shows := func(phase v1.PodPhase) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for a.cached("default", "p") == nil || a.cached("default", "p").Status.Phase != phase {
			if time.Now().After(deadline) {
				t.Fatalf("the informer's pod does not show phase %s", phase)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	write := func(phase v1.PodPhase, wantGets int) {
		t.Helper()
		c.ClearActions()
		if err := a.UpdatePodStatus(ctx, "default", "p", "uid-1", v1.PodStatus{Phase: phase}); err != nil {
			t.Fatal(err)
		}
		if n := gets(); n != wantGets {
			t.Errorf("status %s: %d GETs of the pod, want %d", phase, n, wantGets)
		}
	}

	shows(v1.PodPending)
	write(v1.PodPending, 0) // the informer shows it already
	write(v1.PodRunning, 1)
	shows(v1.PodRunning)
	write(v1.PodRunning, 0)

	// Another writer changes the status: once the informer shows it, the
	// status written last is written again.
	other := p.DeepCopy()
	other.Status.Phase = v1.PodFailed
	if _, err := c.CoreV1().Pods("default").UpdateStatus(context.Background(), other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	shows(v1.PodFailed)
	write(v1.PodRunning, 1)
	got, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1.PodRunning {
		t.Errorf("stored phase %s, want the status written again", got.Status.Phase)
	}
}
