package scenario_test

import (
	"context"
	"fmt"

	"github.com/resizelet/resizelet/resize/scenario"
)

// A scenario is a node, its pods, and steps interleaved with expectations;
// Run plays it on a simulated node and reports every expectation that did
// not hold, with the transcript of everything that happened.
func ExampleRun() {
	s, err := scenario.Parse("cpu-up.yaml", []byte(`
name: cpu-up
description: A Guaranteed pod's CPU doubles in place.
pods:
- metadata: {name: web}
  spec:
    containers:
    - name: app
      resources: {requests: {cpu: 500m, memory: 128Mi}, limits: {cpu: 500m, memory: 128Mi}}
steps:
- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"1"},"limits":{"cpu":"1"}}}]}}'}
- expect:
    pod: web
    conditions: []
    events: [{reason: ResizeStarted}, {reason: ResizeCompleted}]
    cgroups:
      pod: {cpu.max: "100000 100000", cpu.weight: "39"}
`))
	if err != nil {
		panic(err)
	}
	res, err := scenario.Run(context.Background(), s, scenario.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("mismatches:", len(res.Mismatches))
	for _, m := range res.Mismatches {
		fmt.Println(m)
	}
	// Output:
	// mismatches: 0
}
