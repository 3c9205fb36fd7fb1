package conform

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// versionOnly is a CRI server that answers Version only, with v.
type versionOnly struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	v *runtimeapi.VersionResponse
}

func (s *versionOnly) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return s.v, nil
}

// listen returns a unix socket in a temporary directory (short, as socket
// paths must be).
func listen(t *testing.T) (net.Listener, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "conform")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, "unix://" + path
}

// TestDialRefusesWhatIsNotACRIRuntime: every kind of endpoint that is not
// a CRI runtime gives ErrNotCRI, quickly, with a message that says what
// the endpoint is.
func TestDialRefusesWhatIsNotACRIRuntime(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		endpoint func(t *testing.T) string
		want     string
	}{
		{"relative path", func(*testing.T) string { return "unix://run/x.sock" }, "want unix:///PATH"},
		{"tcp", func(*testing.T) string { return "tcp://127.0.0.1:1" }, "want unix:///PATH"},
		{"missing socket", func(t *testing.T) string { return "unix://" + filepath.Join(t.TempDir(), "none.sock") }, "no such file or directory"},
		{"regular file", func(*testing.T) string { return "unix://" + file }, "is not a unix socket"},
		{"HTTP server", func(t *testing.T) string {
			l, ep := listen(t)
			srv := &http.Server{Handler: http.NotFoundHandler()}
			go srv.Serve(l)
			t.Cleanup(func() { srv.Close() })
			return ep
		}, "no gRPC server answers there"},
		{"gRPC without the CRI", func(t *testing.T) string {
			l, ep := listen(t)
			srv := grpc.NewServer()
			go srv.Serve(l)
			t.Cleanup(srv.Stop)
			return ep
		}, "does not serve the CRI (runtime.v1.RuntimeService)"},
		{"CRI without a name", func(t *testing.T) string {
			l, ep := listen(t)
			srv := grpc.NewServer()
			runtimeapi.RegisterRuntimeServiceServer(srv, &versionOnly{v: &runtimeapi.VersionResponse{}})
			go srv.Serve(l)
			t.Cleanup(srv.Stop)
			return ep
		}, "names no runtime or CRI version"},
		{"silent", func(t *testing.T) string {
			l, ep := listen(t)
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					t.Cleanup(func() { c.Close() })
				}
			}()
			return ep
		}, "no answer to the CRI Version call within 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := tc.endpoint(t)
			start := time.Now()
			rt, _, err := Dial(context.Background(), ep, 300*time.Millisecond)
			if err == nil {
				rt.Close()
				t.Fatalf("Dial(%s) accepted it", ep)
			}
			if !errors.Is(err, ErrNotCRI) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Dial(%s) = %v, want ErrNotCRI saying %q", ep, err, tc.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Dial took %s", d)
			}
		})
	}
}

// TestDialAcceptsACRIRuntime: a runtime that names itself is accepted and
// its version returned.
func TestDialAcceptsACRIRuntime(t *testing.T) {
	l, ep := listen(t)
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, &versionOnly{v: &runtimeapi.VersionResponse{RuntimeName: "fake", RuntimeVersion: "1.0", RuntimeApiVersion: "v1"}})
	go srv.Serve(l)
	defer srv.Stop()
	rt, v, err := Dial(context.Background(), ep, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if v.GetRuntimeName() != "fake" || v.GetRuntimeApiVersion() != "v1" {
		t.Errorf("version %v", v)
	}
}
