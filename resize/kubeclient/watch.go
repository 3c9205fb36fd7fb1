package kubeclient

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/resizelet/resizelet/resize/apiserver"
)

// WatchBuffer is how many changes a watch through the adapter holds for
// its reader before the cluster closes it (apiserver.WatchOptions.Buffer).
// The API server gives a watcher that falls behind time to catch up (its
// watch cache waits on a full watcher for a while before it ends the
// watch); the cluster never waits, so the adapter asks for a deep buffer
// instead: a client-go reflector falls behind in bursts, when many nodes
// write at once, and a watch closed makes it list everything again.
const WatchBuffer = 1 << 14

// noWatchList refuses a watch that asks for the initial events
// (sendInitialEvents, client-go's watch-list), which the cluster does not
// send with the bookmark that ends them: a client-go reflector then falls
// back to a list and a watch from the list's resourceVersion, where it
// would otherwise wait for the bookmark for ever.
func noWatchList(opts metav1.ListOptions) error {
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		return apierrors.NewBadRequest("sendInitialEvents (watch-list) is not served by resizelet's cluster: list, then watch")
	}
	return nil
}

// item is an object as client-go sees it, and what selectors read of it.
type item struct {
	obj    runtime.Object
	labels map[string]string
	fields fields.Set
}

// change is a change as client-go sees it: the object after it, and
// before it when the change is not an addition (nil otherwise).
type change struct {
	cur, old *item
}

// watcher is a client-go watch.Interface over an apiserver.Watcher: one
// goroutine takes each change, converts it (a copy of its own for the
// reader), applies the selectors, and hands it on. While the reader does
// not read, changes wait in the cluster's buffer; when that overflows the
// cluster closes the Watcher, and this one closes its channel after the
// changes already buffered, as a watch the API server ends.
type watcher struct {
	w    *apiserver.Watcher
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

// newWatcher starts the goroutine. convert returns false for a change that
// is not of this watch's kind. The watch ends when ctx is done, as a
// client-go watch whose request's context ends.
func newWatcher(ctx context.Context, w *apiserver.Watcher, sel selector, convert func(apiserver.WatchEvent) (change, bool)) *watcher {
	x := &watcher{w: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go x.run(sel, convert)
	if done := ctx.Done(); done != nil {
		go func() {
			select {
			case <-done:
				x.Stop()
			case <-x.stop:
			}
		}()
	}
	return x
}

// ResultChan is the channel the changes arrive on.
func (x *watcher) ResultChan() <-chan watch.Event { return x.out }

// Stop ends the watch; the channel is closed soon after.
func (x *watcher) Stop() {
	x.once.Do(func() {
		close(x.stop)
		x.w.Stop()
	})
}

func (x *watcher) run(sel selector, convert func(apiserver.WatchEvent) (change, bool)) {
	defer close(x.out)
	for {
		var ev apiserver.WatchEvent
		var ok bool
		select {
		case ev, ok = <-x.w.ResultChan():
			if !ok {
				return
			}
		case <-x.stop:
			return
		}
		ch, ok := convert(ev)
		if !ok {
			continue
		}
		out, ok := selected(ev.Type, ch, sel)
		if !ok {
			continue
		}
		select {
		case x.out <- out:
		case <-x.stop:
			return
		}
	}
}

// selected is the event a watch with selectors sends for a change, as the
// API server's watch cache decides it (k8s.io/apiserver
// pkg/storage/cacher/cache_watcher.go, convertToWatchEvent): MODIFIED when
// the object matches before and after, ADDED when it comes to match,
// DELETED (with the object as it was, at the change's resourceVersion)
// when it stops matching or is deleted, and nothing when it matches
// neither before nor after.
func selected(typ watch.EventType, ch change, sel selector) (watch.Event, bool) {
	if sel.everything() {
		// Everything matches before and after: the change as it is.
		return watch.Event{Type: typ, Object: ch.cur.obj}, true
	}
	cur := typ != watch.Deleted && sel.matches(ch.cur.labels, ch.cur.fields)
	old := ch.old != nil && sel.matches(ch.old.labels, ch.old.fields)
	switch {
	case cur && !old:
		return watch.Event{Type: watch.Added, Object: ch.cur.obj}, true
	case cur && old:
		return watch.Event{Type: watch.Modified, Object: ch.cur.obj}, true
	case old:
		return watch.Event{Type: watch.Deleted, Object: ch.old.obj}, true
	}
	return watch.Event{}, false
}
