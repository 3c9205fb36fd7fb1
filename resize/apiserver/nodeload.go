package apiserver

import "github.com/resizelet/resizelet/allocation"

// NodeLoad is what the scheduler counts as taken on the node
// (allocation.NodeLoad). The first call counts every pod; from then on
// every write keeps the counts, so that a cluster nobody schedules in pays
// nothing for them.
func (c *Cluster) NodeLoad(node string) allocation.NodeLoad {
	if !c.lock() {
		return allocation.NodeLoad{}
	}
	defer c.mu.Unlock()
	if c.loads == nil {
		c.loads = &allocation.NodeLoads[podRef]{}
		for key, sp := range c.pods {
			c.loads.Set(key, sp.thaw())
		}
	}
	return c.loads.Of(node)
}
