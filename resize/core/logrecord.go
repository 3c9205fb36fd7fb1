package core

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// LogRecord and the key/value helpers of the kubelet's log lines; the
// lines themselves are built in logs.go.

// LogRecord is one line the kubelet v1.35.4 logs on the resize path
// (klog.InfoS, klog.V(n).InfoS, klog.ErrorS and their contextual-logger
// forms), with the kubelet's message and key/value pairs. A core with
// logging on (SetLogging) returns the records of each Step in Ready.Logs;
// the driver hands them to its logger. The lines, where the kubelet logs
// them and at which verbosity, are listed in package resize's
// documentation of Deps.Logger.
type LogRecord struct {
	// Time is the core's time when the line was logged.
	Time time.Time
	// V is the klog verbosity of an info line: n for klog.V(n).InfoS, 0
	// for klog.InfoS. It is 0 for error lines.
	V int
	// Error marks an error line (klog.ErrorS, logger.Error).
	Error bool
	// Msg is the kubelet's message.
	Msg string
	// Attrs are the kubelet's key/value pairs, in its order. An error
	// line with an error carries it first, under "err", as klog prints it.
	Attrs []slog.Attr
}

// Level is the record's slog level: slog.LevelError for an error line,
// and slog.Level(-V) for an info line, as go-logr's bridge to slog maps
// verbosity: klog.InfoS is slog.LevelInfo, V(4) is slog.LevelDebug, and a
// handler that takes level -n shows what klog shows with -v=n.
func (r LogRecord) Level() slog.Level {
	if r.Error {
		return slog.LevelError
	}
	return slog.Level(-r.V)
}

// String renders the record as one line, for tests and debugging: level,
// message, then the pairs as key=value.
func (r LogRecord) String() string {
	s := r.Level().String() + " " + fmt.Sprintf("%q", r.Msg)
	for _, a := range r.Attrs {
		s += " " + a.String()
	}
	return s
}

// kObj is klog.KObj(pod) as klog prints it: namespace/name.
func kObj(pod *v1.Pod) slog.Attr {
	if pod.Namespace == "" {
		return slog.String("pod", pod.Name)
	}
	return slog.String("pod", pod.Namespace+"/"+pod.Name)
}

// podDesc is "pod" as format.Pod prints it: name_namespace(uid)
// (pkg/kubelet/util/format/pod.go).
func podDesc(pod *v1.Pod) slog.Attr { return slog.String("pod", formatPod(pod)) }

func podUID(uid types.UID) slog.Attr { return slog.String("podUID", string(uid)) }

// containerID is a kubecontainer.ContainerID as its String prints it:
// the runtime's type, "://", the ID.
func containerID(id string) string { return containerIDPrefix + id }

// KubeContainerID is the kubelet's kubecontainer.ContainerID, for the
// lines that log one as a value rather than through its String (whose
// receiver is a pointer): a text handler prints it as klog's text format
// does, {Type:containerd ID:...}, a JSON handler as the kubelet's JSON
// format does.
type KubeContainerID struct {
	Type string
	ID   string
}

// kubeContainerID is the runtime container ID id as the kubelet holds it.
func kubeContainerID(id string) KubeContainerID {
	return KubeContainerID{Type: strings.TrimSuffix(containerIDPrefix, "://"), ID: id}
}

// ErrResizePodInPlace is the kubelet's kubecontainer.ErrResizePodInPlace,
// which the error of the "Error syncing pod, skipping" line of a failed
// resize wraps (errors.Is).
var ErrResizePodInPlace = errors.New("ResizePodInPlaceError")

// containerIDPrefix is the runtime's name in container IDs.
const containerIDPrefix = "containerd://"
