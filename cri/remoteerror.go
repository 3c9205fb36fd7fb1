package cri

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// The errors of a runtime reached over the CRI's gRPC socket
// (remote.Client) are defined here rather than with the client, because
// the resize path reads them (IsUnimplemented) without dialing anything:
// codes and status come with k8s.io/cri-api's gRPC service types, which
// every program of this module links anyway.

// RemoteError is a CRI runtime's gRPC error: the method, the status code and
// the runtime's own message. Error returns the message alone, as the
// runtime wrote it, because that is what the kubelet shows in pod
// conditions and events and what users match (runc's "unable to set memory
// limit to ..."). errors.Is maps codes.NotFound to ErrNotFound,
// codes.Unimplemented to ErrUnimplemented, codes.Unavailable to
// ErrUnavailable and codes.DeadlineExceeded and
// codes.Canceled to the context errors.
type RemoteError struct {
	Method  string
	Code    codes.Code
	Message string
}

// Error returns the runtime's message.
func (e *RemoteError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.Message
}

// Is reports whether the code corresponds to target.
func (e *RemoteError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch e.Code {
	case codes.NotFound:
		return target == ErrNotFound
	case codes.Unimplemented:
		return target == ErrUnimplemented
	case codes.Unavailable:
		return target == ErrUnavailable
	case codes.DeadlineExceeded:
		return target == context.DeadlineExceeded
	case codes.Canceled:
		return target == context.Canceled
	}
	return false
}

// GRPCStatus returns the gRPC status, so grpcstatus.FromError and status.Code
// work on a RemoteError.
func (e *RemoteError) GRPCStatus() *grpcstatus.Status {
	if e == nil {
		return nil
	}
	return grpcstatus.New(e.Code, e.Message)
}

// ExitError is ExecSync's error when the command ran and exited non-zero.
type ExitError struct {
	ExitCode int32
}

// Error says how the command ended.
func (e *ExitError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("command exited with code %d", e.ExitCode)
}

// IsUnimplemented reports whether err says the runtime does not implement
// the call, as the kubelet reads UpdatePodSandboxResources' errors: the
// gRPC code Unimplemented (ErrUnimplemented), or the code Unknown with a
// message containing "not implemented", which containerd 2.2 answers
// instead (pkg/kubelet/kuberuntime/kuberuntime_container.go,
// updatePodSandboxResources).
func IsUnimplemented(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnimplemented) {
		return true
	}
	var re *RemoteError
	return errors.As(err, &re) && re.Code == codes.Unknown && strings.Contains(re.Message, "not implemented")
}
