package remote

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// configServer is a criServer that answers RuntimeConfig with resp or
// err (criServer itself answers Unimplemented), and serves images.
type configServer struct {
	*criServer
	resp *runtimeapi.RuntimeConfigResponse
	err  error
}

func (s *configServer) RuntimeConfig(ctx context.Context, _ *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	return s.resp, s.err
}

// imageServer is a CRI image service that has the images in have and
// pulls the ones in pullable.
type imageServer struct {
	runtimeapi.UnimplementedImageServiceServer
	have     map[string]bool
	pullable map[string]bool
}

func (s *imageServer) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	name := req.GetImage().GetImage()
	if !s.have[name] {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	return &runtimeapi.ImageStatusResponse{Image: &runtimeapi.Image{Id: "sha256:" + name, RepoTags: []string{name}}}, nil
}

func (s *imageServer) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	name := req.GetImage().GetImage()
	if !s.pullable[name] {
		return nil, grpcstatus.Errorf(codes.Unknown, "failed to pull and unpack image %q: not found", name)
	}
	s.have[name] = true
	return &runtimeapi.PullImageResponse{ImageRef: "sha256:" + name}, nil
}

// serveWith serves rs and is (serve) and returns a Client connected to
// them.
func serveWith(t *testing.T, rs runtimeapi.RuntimeServiceServer, is runtimeapi.ImageServiceServer) *Client {
	t.Helper()
	r, err := Dial(context.Background(), serve(t, rs, is))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestCgroupDriverOfClient: over the CRI, the driver comes from the
// RuntimeConfig call; Unimplemented (containerd 1.6) and an answer without
// a Linux config mean "cannot tell"; another error, and a driver the
// kubelet does not know, are errors.
func TestCgroupDriverOfClient(t *testing.T) {
	ctx := context.Background()
	sim := &criServer{rt: cri.NewSimContainerd(cgroup.NewSimKernel(cgroup.V2))}
	for _, tc := range []struct {
		name    string
		srv     runtimeapi.RuntimeServiceServer
		want    cgroup.Driver
		known   bool
		wantErr string
	}{
		{name: "Unimplemented", srv: sim},
		{name: "systemd", srv: &configServer{criServer: sim, resp: &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_SYSTEMD}}}, want: cgroup.DriverSystemd, known: true},
		{name: "cgroupfs", srv: &configServer{criServer: sim, resp: &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS}}}, want: cgroup.DriverCgroupfs, known: true},
		{name: "no Linux config", srv: &configServer{criServer: sim, resp: &runtimeapi.RuntimeConfigResponse{}}},
		{name: "unknown driver", srv: &configServer{criServer: sim, resp: &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: 7}}}, wantErr: "runtime returned an unknown cgroup driver 7"},
		{name: "failure", srv: &configServer{criServer: sim, err: grpcstatus.Error(codes.Internal, "config not loaded")}, wantErr: "runtime config: config not loaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := serveWith(t, tc.srv, nil)
			got, known, err := cri.CgroupDriverOf(ctx, cri.NewRecorder(r))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("CgroupDriverOf = %q, %v, %v; want an error containing %q", got, known, err, tc.wantErr)
				}
				return
			}
			if err != nil || known != tc.known || got != tc.want {
				t.Errorf("CgroupDriverOf = %q, %v, %v; want %q, %v, nil", got, known, err, tc.want, tc.known)
			}
		})
	}
}

// TestClientImageStatusAndPull: ImageStatus says whether the runtime has
// an image (nil when not), PullImage pulls it or returns the runtime's
// error, and a runtime without an image service answers Unimplemented.
func TestClientImageStatusAndPull(t *testing.T) {
	ctx := context.Background()
	is := &imageServer{have: map[string]bool{"busybox:local": true}, pullable: map[string]bool{"pause:3.10": true}}
	r := serveWith(t, &criServer{rt: cri.NewSimContainerd(cgroup.NewSimKernel(cgroup.V2))}, is)
	if img, err := r.ImageStatus(ctx, "busybox:local"); err != nil || img.GetId() != "sha256:busybox:local" {
		t.Errorf("ImageStatus(present) = %v, %v", img, err)
	}
	if img, err := r.ImageStatus(ctx, "pause:3.10"); err != nil || img != nil {
		t.Errorf("ImageStatus(absent) = %v, %v; want nil, nil", img, err)
	}
	if ref, err := r.PullImage(ctx, "pause:3.10"); err != nil || ref != "sha256:pause:3.10" {
		t.Errorf("PullImage = %q, %v", ref, err)
	}
	if img, err := r.ImageStatus(ctx, "pause:3.10"); err != nil || img == nil {
		t.Errorf("ImageStatus after the pull = %v, %v; want the image", img, err)
	}
	if _, err := r.PullImage(ctx, "nowhere:1"); err == nil || !strings.Contains(err.Error(), `failed to pull and unpack image "nowhere:1"`) {
		t.Errorf("PullImage of an image that cannot be pulled: %v, want the runtime's message", err)
	}

	noImages := serveWith(t, &criServer{rt: cri.NewSimContainerd(cgroup.NewSimKernel(cgroup.V2))}, nil)
	if _, err := noImages.ImageStatus(ctx, "busybox:local"); !errors.Is(err, cri.ErrUnimplemented) {
		t.Errorf("ImageStatus without an image service: %v, want ErrUnimplemented", err)
	}
}
