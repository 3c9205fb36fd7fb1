package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Summary is what a run did.
type Summary struct {
	Nodes, PodsStart, PodsEnd int
	// Requested counts the in-place resizes the API server accepted.
	Requested int
	// AtOnce completed within the request (admitted and actuated);
	// Deferred and Infeasible were so at first, or later after being
	// InProgress at first: neither done nor pending when the request
	// returned (on a real API server, no answer from the kubelet within
	// answerWithin).
	AtOnce, Deferred, Infeasible, InProgress int
	// Refused counts resizes the API server refused (from 1.36, beyond
	// the node's allocatable); they are recreated too.
	Refused int
	// Completed counts the in-place resizes that completed, at once or
	// later; Durations are their times from request to ResizeCompleted.
	Completed int
	Durations []time.Duration
	// DeferredDone counts the Deferred ones that completed later;
	// DeferredDurations are their times to complete.
	DeferredDone      int
	DeferredDurations []time.Duration
	// PendingAtEnd are in-place resizes neither completed nor given up
	// when the run ended.
	PendingAtEnd int
	// Recreated counts recreations by cause: "infeasible", "deferred"
	// (over deferredTimeout), "error" (the kubelet's ResizeError) and
	// "refused".
	Recreated map[string]int
	// Waiting are replacements no node had room for at the end.
	Waiting int
	// Real is what a run on a real API server adds (real.go); nil in
	// the simulation.
	Real *RealSummary
}

// RealSummary is what a run on a real API server adds to the summary.
type RealSummary struct {
	Server, Version, Namespace string
	// Rounds is how many rounds ran, Late how many started after their
	// time because the one before took longer than the interval.
	Rounds, Late int
	// Nodes are the nodes used, in their order, and CompletedBy the
	// in-place resizes each completed: the ResizeCompleted events the
	// kubelets (the agents' nodes) sent about the run's pods, by the
	// node that sent them (their source host), repeats counted.
	Nodes       []string
	CompletedBy map[string]int
	// Kubelets are the kubelet versions the nodes report.
	Kubelets []string
	// EventsRecorded are the events the updater recorded, EventsStored
	// those the API server has from it at the end, repeats counted.
	EventsRecorded, EventsStored int
}

// Recreations is the number of pods recreated.
func (s *Summary) Recreations() int {
	n := 0
	for _, k := range s.Recreated {
		n += k
	}
	return n
}

// Print writes the summary.
func (s *Summary) Print(w io.Writer, cfg Config) {
	if r := s.Real; r != nil {
		fmt.Fprintf(w, "\nsummary after %d rounds of %s on %s (kube-apiserver %s, namespace %s; %d nodes, %d pods, seed %d, %s patches, kubelet %s):\n",
			r.Rounds, cfg.Interval, r.Server, r.Version, r.Namespace, s.Nodes, s.PodsStart, cfg.Seed, cfg.Patch, strings.Join(r.Kubelets, ", "))
	} else {
		fmt.Fprintf(w, "\nsummary after %s of simulated time (%d nodes, %d pods, seed %d, %s patches, kubelet %s):\n",
			cfg.Duration, s.Nodes, s.PodsStart, cfg.Seed, cfg.Patch, cfg.Kubelet)
	}
	fmt.Fprintf(w, "  in-place resizes      %5d requested\n", s.Requested)
	fmt.Fprintf(w, "    done at once        %5d\n", s.AtOnce)
	fmt.Fprintf(w, "    deferred            %5d (%d done later, %d recreated after %s, %d still pending)\n",
		s.Deferred, s.DeferredDone, s.Recreated["deferred"], deferredTimeout, s.PendingAtEnd)
	fmt.Fprintf(w, "    infeasible          %5d (%d recreated)\n", s.Infeasible, s.Recreated["infeasible"])
	if s.InProgress > 0 || s.Recreated["error"] > 0 {
		fmt.Fprintf(w, "    in progress         %5d (%d recreated after an error)\n", s.InProgress, s.Recreated["error"])
	}
	if s.Refused > 0 {
		fmt.Fprintf(w, "  refused by the API    %5d (%d recreated)\n", s.Refused, s.Recreated["refused"])
	}
	fmt.Fprintf(w, "  completed in place    %5d  time to complete: %s\n", s.Completed, durations(s.Durations))
	if s.DeferredDone > 0 {
		fmt.Fprintf(w, "    after a deferral    %5d  time to complete: %s\n", s.DeferredDone, durations(s.DeferredDurations))
	}
	fmt.Fprintf(w, "  recreations           %5d\n", s.Recreations())
	fmt.Fprintf(w, "  pods                  %5d at the start, %d at the end (%d waiting for a node)\n", s.PodsStart, s.PodsEnd, s.Waiting)
	if r := s.Real; r != nil {
		by := make([]string, 0, len(r.Nodes))
		for _, n := range r.Nodes {
			by = append(by, fmt.Sprintf("%s %d", n, r.CompletedBy[n]))
		}
		fmt.Fprintf(w, "  completed by node     %s (the kubelets' ResizeCompleted events)\n", strings.Join(by, ", "))
		fmt.Fprintf(w, "  updater events        %5d recorded, %d on the API server\n", r.EventsRecorded, r.EventsStored)
		fmt.Fprintf(w, "  rounds                %5d of %s, %d started late (the round before took longer)\n", r.Rounds, cfg.Interval, r.Late)
	}
}

// durations sums up times to complete: median, 90th percentile, maximum.
func durations(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	at := func(p float64) time.Duration { return sorted[int(p*float64(len(sorted)-1))] }
	return fmt.Sprintf("median %s, p90 %s, max %s", at(0.5), at(0.9), sorted[len(sorted)-1])
}

// Check returns what does not add up in the summary: every in-place resize
// the API server accepted either completed, is still pending, or fell
// back to recreation; every infeasible one and every refused one was
// recreated; the number of pods stayed the same; and on a real API
// server, every event the updater recorded reached it.
func (s *Summary) Check() []string {
	var problems []string
	if accounted := s.Completed + s.PendingAtEnd + s.Recreated["deferred"] + s.Recreated["infeasible"] + s.Recreated["error"]; accounted != s.Requested {
		problems = append(problems, fmt.Sprintf("%d in-place resizes requested, %d accounted for (completed %d, pending %d, recreated %d deferred, %d infeasible, %d after an error)",
			s.Requested, accounted, s.Completed, s.PendingAtEnd, s.Recreated["deferred"], s.Recreated["infeasible"], s.Recreated["error"]))
	}
	if s.Recreated["infeasible"] != s.Infeasible {
		problems = append(problems, fmt.Sprintf("%d infeasible resizes, %d recreated", s.Infeasible, s.Recreated["infeasible"]))
	}
	if s.Recreated["refused"] != s.Refused {
		problems = append(problems, fmt.Sprintf("%d refused resizes, %d recreated", s.Refused, s.Recreated["refused"]))
	}
	if s.AtOnce+s.DeferredDone > s.Completed {
		problems = append(problems, fmt.Sprintf("%d completed, fewer than the %d done at once and %d done after a deferral", s.Completed, s.AtOnce, s.DeferredDone))
	}
	if len(s.Durations) != s.Completed {
		problems = append(problems, fmt.Sprintf("%d completed, %d times to complete", s.Completed, len(s.Durations)))
	}
	if s.PodsEnd != s.PodsStart {
		problems = append(problems, fmt.Sprintf("%d pods at the start, %d at the end", s.PodsStart, s.PodsEnd))
	}
	if r := s.Real; r != nil && r.EventsStored != r.EventsRecorded {
		problems = append(problems, fmt.Sprintf("the updater recorded %d events, the API server has %d of them", r.EventsRecorded, r.EventsStored))
	}
	return problems
}
