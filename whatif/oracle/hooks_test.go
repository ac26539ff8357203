package oracle

import (
	"context"
	_ "unsafe" // go:linkname: the two unexported Scheduler methods Kueue's own TestSchedule calls

	"sigs.k8s.io/kueue/pkg/scheduler"
	"sigs.k8s.io/kueue/pkg/util/routine"
	"sigs.k8s.io/kueue/pkg/util/wait"
)

// scheduleCycle is (*Scheduler).schedule (pkg/scheduler/scheduler.go, kubernetes-sigs/kueue@v0.19.2):
// one scheduling cycle, what TestSchedule calls as scheduler.schedule(ctx) and what
// Scheduler.Start runs in a loop (wait.UntilWithBackoff).  Called here by symbol because this
// module is not package scheduler; nothing of Kueue's is copied.
//
//go:linkname scheduleCycle sigs.k8s.io/kueue/pkg/scheduler.(*Scheduler).schedule
func scheduleCycle(s *scheduler.Scheduler, ctx context.Context) wait.SpeedSignal

// setAdmissionRoutineWrapper is (*Scheduler).setAdmissionRoutineWrapper: TestSchedule wraps the
// admission goroutines with a WaitGroup so a cycle's API writes are done before it reads them.
//
//go:linkname setAdmissionRoutineWrapper sigs.k8s.io/kueue/pkg/scheduler.(*Scheduler).setAdmissionRoutineWrapper
func setAdmissionRoutineWrapper(s *scheduler.Scheduler, w routine.Wrapper)
