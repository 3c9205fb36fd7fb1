package conform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/remote"
)

// ErrNotCRI means the endpoint is not a CRI runtime: nothing listens
// there, it does not speak gRPC, or it does not serve the CRI
// RuntimeService. Dial's errors wrap it and say which.
var ErrNotCRI = errors.New("not a CRI runtime")

// DefaultProbeTimeout bounds Dial's Version call: a CRI runtime answers
// it at once, and a socket that says nothing for this long is not one.
const DefaultProbeTimeout = 10 * time.Second

// CallTimeout is the timeout of each call of the Remote that Dial
// returns: the kubelet's default --runtime-request-timeout, so that a call
// fails here exactly when it would fail for a kubelet (a stop's grace
// period comes on top, as for the kubelet).
const CallTimeout = remote.DefaultCallTimeout

// Dial connects to the CRI runtime at endpoint (unix:///PATH) and makes
// sure it is one before anything is created there: the socket exists,
// answers gRPC, serves runtime.v1.RuntimeService and names itself in
// Version within probeTimeout (DefaultProbeTimeout if 0). Every refusal
// is an error wrapping ErrNotCRI that names the endpoint and what was
// wrong. Close the Remote when done.
func Dial(ctx context.Context, endpoint string, probeTimeout time.Duration) (*remote.Client, *runtimeapi.VersionResponse, error) {
	if probeTimeout <= 0 {
		probeTimeout = DefaultProbeTimeout
	}
	path, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok {
		path = endpoint
	}
	if !strings.HasPrefix(path, "/") {
		return nil, nil, fmt.Errorf("CRI endpoint %q: want unix:///PATH: %w", endpoint, ErrNotCRI)
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("CRI endpoint %s: %w: %w", endpoint, ErrNotCRI, err)
	case st.Mode()&os.ModeSocket == 0:
		return nil, nil, fmt.Errorf("CRI endpoint %s: %s is not a unix socket (mode %s): %w", endpoint, path, st.Mode(), ErrNotCRI)
	}
	probe, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	rt, err := remote.Dial(probe, endpoint, remote.WithCallTimeout(CallTimeout))
	if err != nil {
		return nil, nil, notCRI(ctx, endpoint, probeTimeout, err)
	}
	v, err := rt.Version(probe)
	if err != nil {
		rt.Close()
		return nil, nil, notCRI(ctx, endpoint, probeTimeout, err)
	}
	if v.GetRuntimeName() == "" || v.GetRuntimeApiVersion() == "" {
		rt.Close()
		return nil, nil, fmt.Errorf("CRI endpoint %s: its Version answer names no runtime or CRI version (%v): %w", endpoint, v, ErrNotCRI)
	}
	return rt, v, nil
}

// notCRI explains why the Version call failed.
func notCRI(ctx context.Context, endpoint string, probeTimeout time.Duration, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("CRI endpoint %s: %w", endpoint, ctx.Err())
	}
	var re *cri.RemoteError
	if errors.As(err, &re) {
		switch re.Code {
		case codes.Unimplemented:
			return fmt.Errorf("CRI endpoint %s: it speaks gRPC but does not serve the CRI (runtime.v1.RuntimeService): %s: %w", endpoint, re.Message, ErrNotCRI)
		case codes.DeadlineExceeded:
			return fmt.Errorf("CRI endpoint %s: no answer to the CRI Version call within %s: %w", endpoint, probeTimeout, ErrNotCRI)
		case codes.Unavailable:
			return fmt.Errorf("CRI endpoint %s: no gRPC server answers there: %s: %w", endpoint, re.Message, ErrNotCRI)
		}
		return fmt.Errorf("CRI endpoint %s: the CRI Version call failed (%s): %s: %w", endpoint, re.Code, re.Message, ErrNotCRI)
	}
	return fmt.Errorf("CRI endpoint %s: %w: %w", endpoint, ErrNotCRI, err)
}
