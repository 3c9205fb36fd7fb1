package explore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/resize/explore"
	"github.com/resizelet/resizelet/resize/scenario"
)

// fuzzScenario turns bytes into a small scenario: one pod of one or two
// containers on a cgroup v1 or v2 node, Guaranteed or Burstable, with a
// memory resize policy of NotRequired or RestartContainer, and one or two
// resizes that keep its QoS class (what the API server accepts), an
// advance between them. The second return says whether the opt-in fixes
// are on.
func fuzzScenario(data []byte) (string, bool) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	version := []string{"v2", "v1"}[next()%2]
	fixes := next()%2 == 1
	guaranteed := next()%2 == 0
	ctrs := 1 + next()%2
	type amounts struct{ cpu, mem int }
	pick := func() amounts { return amounts{cpu: 100 * (1 + next()%15), mem: 32 * (1 + next()%8)} }
	res := func(a amounts, limit amounts) string {
		if guaranteed {
			return fmt.Sprintf("{requests: {cpu: %dm, memory: %dMi}, limits: {cpu: %dm, memory: %dMi}}", a.cpu, a.mem, a.cpu, a.mem)
		}
		return fmt.Sprintf("{requests: {cpu: %dm, memory: %dMi}, limits: {cpu: %dm, memory: %dMi}}", a.cpu, a.mem, a.cpu+limit.cpu, a.mem+limit.mem)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: fuzz\nnode: {cgroupVersion: %s}\npods:\n- metadata: {name: p}\n  spec:\n    containers:\n", version)
	extra := make([]amounts, ctrs)
	for i := 0; i < ctrs; i++ {
		extra[i] = amounts{cpu: 100 * (next() % 4), mem: 32 * (next() % 4)}
		policy := []string{"NotRequired", "RestartContainer"}[next()%2]
		fmt.Fprintf(&b, "    - name: c%d\n      resources: %s\n      resizePolicy: [{resourceName: memory, restartPolicy: %s}]\n", i, res(pick(), extra[i]), policy)
	}
	b.WriteString("steps:\n")
	for r := 0; r < 1+next()%2; r++ {
		if r > 0 {
			b.WriteString("- advance: 1m\n")
		}
		var parts []string
		for i := 0; i < ctrs; i++ {
			if next()%3 == 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("{name: c%d, resources: %s}", i, res(pick(), extra[i])))
		}
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("{name: c0, resources: %s}", res(pick(), extra[0])))
		}
		fmt.Fprintf(&b, "- resize: {pod: p, patch: {spec: {containers: [%s]}}}\n", strings.Join(parts, ", "))
	}
	return b.String(), fixes
}

// FuzzExplore explores random small scenarios and holds the explorer's
// invariants: nothing is broken or stuck, every drift is one of the
// kubelet's gaps (with the fixes off), and with ReconcilePodCgroups and
// FlushCheckpoints every point converges.
func FuzzExplore(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 9, 3, 0, 0, 0, 1, 2, 0})
	f.Add([]byte{1, 1, 1, 1, 5, 5, 1, 1, 0, 1, 3, 3, 1, 1, 9, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		text, fixes := fuzzScenario(data)
		s, err := scenario.Parse("fuzz.yaml", []byte(text))
		if err != nil {
			t.Fatalf("the generator made an invalid scenario: %v\n%s", err, text)
		}
		rep, err := explore.Scenario(context.Background(), s, explore.Options{ReconcilePodCgroups: fixes, FlushCheckpoints: fixes})
		if err != nil {
			// A resize the API server refuses is the step's outcome, not
			// an error; an error here is the explorer's or the runner's.
			t.Fatalf("explore: %v\n%s", err, text)
		}
		for _, b := range rep.Baselines {
			if b.Outcome == explore.Broken {
				t.Errorf("steps[%d] without a fault is broken: %s\n%s", b.Step, b.Reason, text)
			}
		}
		for _, p := range rep.Points {
			switch {
			case p.Outcome == explore.Converged:
			case p.Outcome == explore.Drifted && p.Owner == explore.OwnerKubelet && !fixes:
			default:
				t.Errorf("%s %q: %s: %s\n%s", p.ID(), p.Op, explore.Label(p.Outcome, p.Owner), p.Reason, text)
			}
		}
	})
}
