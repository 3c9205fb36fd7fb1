package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cri"
)

// maxMsgSize is the largest gRPC message a Client accepts, as the kubelet's
// CRI client sets it (16 MiB).
const maxMsgSize = 16 << 20

// Client is a cri.Runtime that talks to a real CRI runtime (containerd, CRI-O)
// over its gRPC socket with k8s.io/cri-api v1, as the kubelet's CRI client
// does: every call gets its own timeout, and the runtime's errors keep the
// runtime's message while mapping to this package's errors for errors.Is.
// Client is safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	client  runtimeapi.RuntimeServiceClient
	images  runtimeapi.ImageServiceClient
	timeout time.Duration
}

// Dial connects to the CRI runtime at endpoint, "unix:///PATH" (a bare
// absolute path is taken as a unix socket too), and checks that it answers
// the Version call within the call timeout; an unreachable runtime gives an
// error wrapping cri.ErrUnavailable. Close the Client when done.
func Dial(ctx context.Context, endpoint string, opts ...Option) (*Client, error) {
	cfg := config{timeout: DefaultCallTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	target, err := parseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	dial := append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
	}, cfg.dial...)
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("connect to CRI runtime %s: %w", endpoint, err)
	}
	r := &Client{conn: conn, client: runtimeapi.NewRuntimeServiceClient(conn), images: runtimeapi.NewImageServiceClient(conn), timeout: cfg.timeout}
	if _, err := r.Version(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connect to CRI runtime %s: %w", endpoint, err)
	}
	return r, nil
}

// parseEndpoint turns an endpoint into a gRPC target. Only unix sockets are
// supported: CRI runtimes listen on one, and a TCP endpoint would need
// credentials this client does not set up.
func parseEndpoint(endpoint string) (string, error) {
	path, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok {
		path = endpoint
	}
	if !strings.HasPrefix(path, "/") {
		return "", fmt.Errorf("CRI endpoint %q: want unix:///PATH: %w", endpoint, ErrInvalidEndpoint)
	}
	return "unix://" + path, nil
}

// ErrInvalidEndpoint means Dial was given an endpoint that is not a
// unix socket.
var ErrInvalidEndpoint = errors.New("invalid CRI endpoint")

// Close closes the connection.
func (r *Client) Close() error {
	if r == nil || r.conn == nil {
		return fmt.Errorf("close: %w", cri.ErrNoRuntime)
	}
	return r.conn.Close()
}

// ready says why a call cannot be made: a Client that Dial did not
// make (nil, or the zero Client) has no connection, and a nil ctx gives no
// deadline to derive the call's from (context.WithTimeout panics on it).
func (r *Client) ready(ctx context.Context) error {
	switch {
	case r == nil || r.client == nil:
		return cri.ErrNoRuntime
	case ctx == nil:
		return cri.ErrNilContext
	}
	return nil
}

// wrapErr turns a gRPC call's error into a cri.RemoteError.
func wrapErr(method string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := grpcstatus.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", method, err)
	}
	return &cri.RemoteError{Method: method, Code: st.Code(), Message: st.Message()}
}
