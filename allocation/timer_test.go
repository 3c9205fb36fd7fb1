package allocation

import (
	"testing"
	"time"
)

// TestRetryTimer walks the timer through a start, a periodic retry and
// retries of other triggers: 30 s after start, then 3 min after every retry.
func TestRetryTimer(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	timer := NewRetryTimer(start)
	steps := []struct {
		name    string
		resetAt *time.Time // nil: only check Due
		wantDue time.Time
	}{
		{"first period after start is 30s", nil, start.Add(30 * time.Second)},
		{"periodic retry at 30s", ptrTime(start.Add(30 * time.Second)), start.Add(30*time.Second + 3*time.Minute)},
		{"a pod_updated retry at 1m resets to 3m from then", ptrTime(start.Add(time.Minute)), start.Add(4 * time.Minute)},
		{"a pods_added retry at 1m10s resets again", ptrTime(start.Add(70 * time.Second)), start.Add(70*time.Second + 3*time.Minute)},
		{"a periodic retry when due", ptrTime(start.Add(70*time.Second + 3*time.Minute)), start.Add(70*time.Second + 6*time.Minute)},
	}
	for _, s := range steps {
		if s.resetAt != nil {
			timer.Reset(*s.resetAt)
		}
		if got := timer.Due(); !got.Equal(s.wantDue) {
			t.Errorf("%s: Due() = %v, want %v", s.name, got.Sub(start), s.wantDue.Sub(start))
		}
	}
}

func TestRetryConstants(t *testing.T) {
	if InitialRetryDelay != 30*time.Second || RetryDelay != 3*time.Minute {
		t.Errorf("InitialRetryDelay, RetryDelay = %v, %v; want 30s, 3m", InitialRetryDelay, RetryDelay)
	}
	triggers := map[string]string{
		TriggerPodResized: "pod_resized", TriggerPodUpdated: "pod_updated", TriggerPodsAdded: "pods_added",
		TriggerPodsRemoved: "pods_removed", TriggerPeriodicRetry: "periodic_retry", TriggerPodTerminated: "pod_terminated",
	}
	for got, want := range triggers {
		if got != want {
			t.Errorf("trigger %q, want %q", got, want)
		}
	}
}

func ptrTime(t time.Time) *time.Time { return &t }
