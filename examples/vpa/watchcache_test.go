package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestPodCacheReplaceIsWhole: a waiter for the resourceVersion of a list
// the reflector is storing (after a watch ended and it listed again)
// sees every pod of the list, never a cache half replaced whose last pod
// stored has that resourceVersion already.
func TestPodCacheReplaceIsWhole(t *testing.T) {
	const pods = 500
	list := make([]any, pods)
	for i := range list {
		p := podFor(newWorld(100).workloads[0], "web-rs", fmt.Sprintf("web-%03d", i), "node-1", amounts{cpu: 100, memory: mib})
		p.Status.Phase = v1.PodRunning
		// The last pod of the list is the last one written.
		p.ResourceVersion = strconv.Itoa(pods - i)
		list[i] = p
	}
	for round := range 20 {
		c := &podCache{mirror: mirror{current: func() uint64 { return 2 * pods }}, groups: map[string]*podGroup{}, byName: map[string]*podGroup{}}
		c.changed = sync.NewCond(&c.mu)
		c.mu.Lock()
		c.synced, c.rv = true, pods // listed once, then the watch ended
		c.mu.Unlock()
		for i := range list {
			list[i].(*v1.Pod).ResourceVersion = strconv.Itoa(2*pods - i)
		}
		seen := make(chan int)
		go func() {
			if err := c.wait(context.Background()); err != nil {
				t.Error(err)
			}
			n := 0
			c.each(labels.Everything(), func(*cachedPod) { n++ })
			seen <- n
		}()
		if err := c.Replace(list, strconv.Itoa(2*pods)); err != nil {
			t.Fatal(err)
		}
		if n := <-seen; n != pods {
			t.Fatalf("round %d: the waiter saw %d pods of the %d listed", round, n, pods)
		}
	}
}
