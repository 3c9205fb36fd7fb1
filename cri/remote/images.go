package remote

import (
	"context"
	"fmt"

	"github.com/resizelet/resizelet/cri"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RuntimeConfig asks the runtime for its configuration (the CRI
// RuntimeConfig call). A runtime older than the call answers an error
// wrapping cri.ErrUnimplemented.
func (r *Client) RuntimeConfig(ctx context.Context) (*runtimeapi.RuntimeConfigResponse, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("RuntimeConfig: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.RuntimeConfig(ctx, &runtimeapi.RuntimeConfigRequest{})
	return resp, wrapErr("RuntimeConfig", err)
}

// ImageStatus returns what the runtime's image service knows of image
// (the CRI ImageStatus call, on the same socket as the runtime service, as
// the kubelet's --image-service-endpoint defaults to its runtime endpoint),
// or nil when the runtime does not have it.
func (r *Client) ImageStatus(ctx context.Context, image string) (*runtimeapi.Image, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("ImageStatus: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		return nil, wrapErr("ImageStatus", err)
	}
	return resp.GetImage(), nil
}

// PullImage makes the runtime pull image (the CRI PullImage call) and
// returns the image's reference.
func (r *Client) PullImage(ctx context.Context, image string) (string, error) {
	if r.ready(ctx) != nil {
		return "", fmt.Errorf("PullImage: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		return "", wrapErr("PullImage", err)
	}
	return resp.GetImageRef(), nil
}

var _ cri.RuntimeConfigurer = (*Client)(nil)
