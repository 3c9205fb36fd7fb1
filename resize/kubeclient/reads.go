package kubeclient

import (
	"context"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/resize"
)

// getPod reads a pod from the API, with its resourceVersion when the API
// has them; a backend without an API has no pods.
func getPod(ctx context.Context, api resize.API, namespace, name string) (*v1.Pod, error) {
	switch a := api.(type) {
	case nil:
		return nil, ErrNoBackend
	case VersionedReader:
		return a.GetPodVersioned(namespace, name)
	}
	return api.GetPod(ctx, namespace, name)
}

// listPods lists the API's pods, with the list's resourceVersion when the
// API has them ("" otherwise).
func listPods(ctx context.Context, api resize.API) ([]*v1.Pod, string) {
	switch a := api.(type) {
	case nil:
		return nil, ""
	case VersionedReader:
		pods, rv := a.ListPodsVersioned()
		return pods, strconv.FormatUint(rv, 10)
	}
	return api.ListPods(ctx), ""
}
