package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/resizelet/resizelet/resize"
)

// RunOptions configure Run. The zero value is the kubelet's defaults.
type RunOptions struct {
	// TickEvery is how often the node's timers are fired (resize.Node.Tick):
	// the pending-resize retry, pod resyncs, status writes to make again.
	// Default 1s.
	TickEvery time.Duration
	// Workers is how many pods are handed to the node at once (one pod is
	// never handed to two workers at once). Default 4.
	Workers int
	// Heartbeat times the node's lease and status; the zero value is the
	// kubelet's (see Heartbeat).
	Heartbeat Heartbeat
	// Registered, when set, is the node's Node as Register returned it:
	// Run then does not register the node again. A caller that must know
	// the node is registered before it goes on (resizesim agent, before
	// it says it is ready) registers first.
	Registered *v1.Node
}

// Run drives node on the API server of a, as a kubelet runs: it registers
// the node (Register), keeps its lease and status fresh (Heartbeat),
// hands the node every pod bound to it as the informer sees it change
// (resize.Node.HandlePod, HandlePodRemoved), and fires the node's timers
// every TickEvery on the wall clock (RunOptions.Registered skips the
// registration). node must have been made on a
// (resize.Deps.Cluster), with resize.WallClock. Run returns when ctx ends,
// after its goroutines have stopped, leaving the node, its pods and its
// Node object as a stopped kubelet leaves them; the caller then closes the
// node and a. It returns early with an error only if the node cannot be
// registered.
func (a *API) Run(ctx context.Context, node *resize.Node, opts RunOptions) error {
	if !a.made() {
		return errNotMade
	}
	if ctx == nil || node == nil || node.API() != resize.API(a) {
		return errors.New("kubeapi: Run needs a context and a node made on this API")
	}
	if opts.TickEvery <= 0 {
		opts.TickEvery = time.Second
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	nodeObj := opts.Registered
	if nodeObj == nil {
		var err error
		if nodeObj, err = a.Register(ctx, node); err != nil {
			return err
		}
	}

	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	var mu sync.Mutex
	removed := map[string]types.UID{} // keys of deleted pods, with their UIDs
	reg, err := a.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(q, obj) },
		UpdateFunc: func(_, obj any) { enqueue(q, obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*v1.Pod); ok {
				key := p.Namespace + "/" + p.Name
				mu.Lock()
				removed[key] = p.UID
				mu.Unlock()
				q.Add(key)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("kubeapi: node %s: watch pods: %w", a.node, err)
	}

	var wg sync.WaitGroup
	handle := func(key string) error {
		ns, name, _ := cache.SplitMetaNamespaceKey(key)
		mu.Lock()
		uid, gone := removed[key]
		delete(removed, key)
		mu.Unlock()
		if gone {
			if err := node.HandlePodRemoved(ctx, ns, name, uid); err != nil {
				return err
			}
		}
		if p := a.cached(ns, name); p != nil {
			return node.HandlePod(ctx, p)
		}
		return nil
	}
	for range opts.Workers {
		wg.Go(func() {
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				err := handle(key)
				switch {
				case err == nil || errors.Is(err, resize.ErrClosed) || ctx.Err() != nil:
					q.Forget(key)
				case q.NumRequeues(key) < 5:
					a.log.Warn("handing a pod to the node failed; trying again", "node", a.node, "pod", key, "err", err)
					q.AddRateLimited(key)
				default:
					a.log.Error("handing a pod to the node failed", "node", a.node, "pod", key, "err", err)
					q.Forget(key)
				}
				q.Done(key)
			}
		})
	}
	wg.Go(func() {
		every(ctx, opts.TickEvery, func() {
			if err := node.Tick(ctx); err != nil && !errors.Is(err, resize.ErrClosed) && ctx.Err() == nil {
				a.log.Warn("node tick failed", "node", a.node, "err", err)
			}
		})
	})
	wg.Go(func() { a.heartbeat(ctx, node, nodeObj, opts.Heartbeat) })

	<-ctx.Done()
	q.ShutDown()
	_ = a.informer.RemoveEventHandler(reg)
	wg.Wait()
	return nil
}

// enqueue adds a pod's key to q.
func enqueue(q workqueue.TypedRateLimitingInterface[string], obj any) {
	if p, ok := obj.(*v1.Pod); ok {
		q.Add(p.Namespace + "/" + p.Name)
	}
}
