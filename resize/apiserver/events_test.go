package apiserver

import (
	"math/rand"
	"testing"
	"time"
)

// TestEventOriginsAreShared: every origin the log hands out equals the
// one asked for and is the log's one shared copy of it (the map's), with
// origins used in random turns, some built anew from equal strings.
func TestEventOriginsAreShared(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	var origins []eventOrigin
	for _, typ := range []string{"Normal", "Warning"} {
		for _, reason := range []string{"ResizeStarted", "ResizeCompleted", "ResizeDeferred"} {
			origins = append(origins, eventOrigin{typ: typ, reason: reason, source: "kubelet", host: "node-1", loc: time.UTC})
		}
	}
	var l eventLog
	for i := 0; i < 10000; i++ {
		o := origins[r.Intn(len(origins))]
		if r.Intn(2) == 0 {
			// An equal origin built anew, not sharing the strings.
			o.reason = string([]byte(o.reason))
		}
		p := l.origin(o)
		if *p != o || l.origins[o] != p {
			t.Fatalf("origin(%+v) = %p %+v, the map's %p", o, p, *p, l.origins[o])
		}
	}
	if len(l.origins) != len(origins) {
		t.Fatalf("%d origins kept, want %d", len(l.origins), len(origins))
	}
}
