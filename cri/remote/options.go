package remote

import (
	"time"

	"google.golang.org/grpc"
)

// DefaultCallTimeout is the per-call timeout of a Client unless
// WithCallTimeout says otherwise: the kubelet's default
// --runtime-request-timeout.
const DefaultCallTimeout = 2 * time.Minute

// Option configures Dial.
type Option func(*config)

type config struct {
	timeout time.Duration
	dial    []grpc.DialOption
}

// WithCallTimeout sets the timeout of each call (DefaultCallTimeout if
// unset or not positive). Calls that wait on purpose (StopContainer with a
// grace period, ExecSync with a timeout) get that wait on top.
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithDialOptions adds gRPC dial options, after the defaults (insecure
// transport over the unix socket, 16 MiB messages).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) { c.dial = append(c.dial, opts...) }
}
