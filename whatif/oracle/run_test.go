package oracle

import (
	"container/heap"
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/scheduler"
	"sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/util/routine"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	"sigs.k8s.io/kueue/pkg/workload"
	workloadevict "sigs.k8s.io/kueue/pkg/workload/evict"
	workloadfinish "sigs.k8s.io/kueue/pkg/workload/finish"
	workloadpatching "sigs.k8s.io/kueue/pkg/workload/patching"
)

// Variant is one way to break the ties a cluster leaves to chance: Kueue orders equal
// priorities and creation times by UID (cluster_queue.go baseCompareFunc, preemption
// CandidatesOrdering), and events at the same second reach it in either order.
type Variant struct {
	Name          string
	ReverseUIDs   bool // UIDs in reverse creation order instead of creation order
	RequeueLate   bool // the requeuer's 1 s batch lands after the instant's other events
	ArrivalsFirst bool // arrivals before finishes, releases and checks at one instant
	// MaxCycles: scheduling cycles an instant may run while they still change the state (a
	// head whose flavor scan alternates keeps Kueue cycling until the next event); another
	// count tells whether the result hinges on it.
	MaxCycles int
}

var Variants = []Variant{
	{Name: "base", MaxCycles: 40},
	{Name: "uid", ReverseUIDs: true, MaxCycles: 40},
	{Name: "requeue-late", RequeueLate: true, MaxCycles: 40},
	{Name: "arrivals-first", ArrivalsFirst: true, MaxCycles: 40},
	{Name: "cycles", MaxCycles: 57},
}

type Admission struct {
	Time         int64                        `json:"time"`
	ClusterQueue string                       `json:"clusterQueue"`
	Flavors      map[string]map[string]string `json:"flavors"`
}

type WorkloadResult struct {
	Admissions  []Admission `json:"admissions"`
	Preemptions []int64     `json:"preemptions"`
}

type Result struct {
	ID        string                     `json:"id"`
	Variant   string                     `json:"variant"`
	Workloads map[string]*WorkloadResult `json:"workloads"`
	// Unsettled: at some instant the cycles still changed the state after Variant.MaxCycles
	// (Kueue keeps cycling until the next event; the "cycles" variant tells whether it matters).
	Unsettled bool `json:"unsettled"`
	// Livelock: the run went past MaxInstants (preemptions over time without end).
	Livelock bool   `json:"livelock"`
	Cycles   int    `json:"cycles"`
	Error    string `json:"error,omitempty"`
}

const (
	MaxInstants         = 1000 // a scenario of <= 10 workloads needs < 100; more is a preemption loop over time
	requeueBatchSeconds = 1    // pkg/cache/queue/inadmissible_workloads.go requeueBatchPeriod
)

// Event kinds in the order the what-if takes one instant's events (whatif/simulator.py
// FINISH, EVICT, CHECK, SUBMIT).
const (
	kFinish = iota
	kRelease
	kCheck
	kArrive
)

type simEvent struct {
	at   int64
	kind int
	seq  int
	key  string
	gen  int
}

type agenda []simEvent

func (a agenda) Len() int { return len(a) }
func (a agenda) Less(i, j int) bool {
	if a[i].at != a[j].at {
		return a[i].at < a[j].at
	}
	if a[i].kind != a[j].kind {
		return a[i].kind < a[j].kind
	}
	return a[i].seq < a[j].seq
}
func (a agenda) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a *agenda) Push(x any)   { *a = append(*a, x.(simEvent)) }
func (a *agenda) Pop() any     { old := *a; x := old[len(old)-1]; *a = old[:len(old)-1]; return x }

type requeuer interface{ ProcessRequeues(ctx context.Context) int }

type harness struct {
	sc       Scenario
	v        Variant
	ctx      context.Context
	log      logr.Logger
	base     time.Time
	now      int64
	clk      *testingclock.FakeClock
	cl       ctrl.Client
	cache    *schdcache.Cache
	queues   *qcache.Manager
	requeuer requeuer
	rec      *core.WorkloadReconciler
	sched    *scheduler.Scheduler
	wg       sync.WaitGroup
	cqs      map[string]*kueue.ClusterQueue

	// the informer's view: the last version of each workload delivered to the handlers
	seen      map[string]*kueue.Workload
	trace     map[string]TraceWorkload
	gen       map[string]int
	uids      map[string]string
	agenda    agenda
	seq       int
	requeueAt *int64

	res Result
}

func secs(t time.Time, base time.Time) int64 { return int64(t.Sub(base) / time.Second) }

// Run replays one scenario through Kueue's scheduler, queue manager, cache and workload
// controller event handlers, in simulated time.
func Run(sc Scenario, v Variant) Result {
	h, err := newHarness(sc, v)
	if err != nil {
		return Result{ID: sc.ID, Variant: v.Name, Error: err.Error()}
	}
	if err := h.loop(); err != nil {
		h.res.Error = err.Error()
	}
	return h.res
}

func newHarness(sc Scenario, v Variant) (*harness, error) {
	objs, err := decodeObjects(sc.Objects)
	if err != nil {
		return nil, err
	}
	log := logr.Discard()
	ctx := ctrllog.IntoContext(context.Background(), log)
	start := int64(0)
	for _, w := range sc.Workloads {
		start = min(start, w.Submit)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := &harness{
		sc: sc, v: v, ctx: ctx, log: log, base: base, now: start,
		clk:   testingclock.NewFakeClock(base.Add(time.Duration(start) * time.Second)),
		cqs:   map[string]*kueue.ClusterQueue{},
		seen:  map[string]*kueue.Workload{},
		trace: map[string]TraceWorkload{},
		gen:   map[string]int{},
		uids:  map[string]string{},
		res:   Result{ID: sc.ID, Variant: v.Name, Workloads: map[string]*WorkloadResult{}},
	}

	namespaces := map[string]bool{}
	for _, q := range objs.localQueues {
		namespaces[q.Namespace] = true
	}
	for _, w := range sc.Workloads {
		namespaces[w.Namespace] = true
	}
	var nsObjs []ctrl.Object
	for _, ns := range sortedKeys(namespaces) {
		nsObjs = append(nsObjs, utiltesting.MakeNamespaceWrapper(ns).Obj())
	}
	lqs := kueue.LocalQueueList{}
	for _, q := range objs.localQueues {
		lqs.Items = append(lqs.Items, *q)
	}
	// TestSchedule's client: the fake client with Workload status as a subresource and SSA
	// taken as a strategic merge (pkg/util/testing TreatSSAAsStrategicMerge).
	// The plain object tracker, not the field-managed one the builder defaults to: managed
	// fields are nothing the scheduler reads, and the field-managed tracker rebuilds a REST
	// mapper of the whole scheme on every patch (40% of a run's CPU).
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		return nil, err
	}
	h.cl = utiltesting.NewClientBuilder().
		WithObjectTracker(clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())).
		WithObjects(nsObjs...).
		WithLists(&lqs).
		WithStatusSubresource(&kueue.Workload{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: utiltesting.TreatSSAAsStrategicMerge}).
		Build()

	// cmd/kueue/main.go: one preemption-expectations store shared by the queue manager, the
	// scheduler and the workload controller; the cache's fair sharing from the Configuration.
	store := expectations.New()
	var cacheOpts []schdcache.Option
	if sc.FairSharing != nil {
		cacheOpts = append(cacheOpts, schdcache.WithFairSharing(true))
	}
	h.cache = schdcache.New(h.cl, cacheOpts...)
	qm, rq := qcache.NewManagerForUnitTestsWithRequeuer(h.cl, h.cache,
		qcache.WithClock(h.clk), qcache.WithPreemptionExpectations(store))
	h.queues, h.requeuer = qm, rq
	for _, q := range objs.localQueues {
		if err := qm.AddLocalQueue(ctx, q); err != nil {
			return nil, fmt.Errorf("LocalQueue %s/%s: %w", q.Namespace, q.Name, err)
		}
		if err := h.cache.AddLocalQueue(q); err != nil {
			return nil, fmt.Errorf("LocalQueue %s/%s in cache: %w", q.Namespace, q.Name, err)
		}
	}
	for _, rf := range objs.flavors {
		h.cache.AddOrUpdateResourceFlavor(log, rf)
	}
	for _, ac := range objs.checks {
		// the provisioning controller marks its checks Active (admissionchecks/provisioning
		// controller.go); a ClusterQueue with an inactive check admits nothing
		apimeta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{
			Type: kueue.AdmissionCheckActive, Status: metav1.ConditionTrue, Reason: "Active", Message: "active",
		})
		h.cache.AddOrUpdateAdmissionCheck(log, ac)
	}
	for _, c := range objs.cohorts {
		if err := h.cache.AddOrUpdateCohort(c); err != nil {
			return nil, fmt.Errorf("Cohort %s: %w", c.Name, err)
		}
		qm.AddOrUpdateCohort(ctx, c)
	}
	for _, cq := range objs.clusterQueue {
		if err := h.cache.AddClusterQueue(ctx, cq); err != nil {
			return nil, fmt.Errorf("ClusterQueue %s in cache: %w", cq.Name, err)
		}
		if err := qm.AddClusterQueue(ctx, cq); err != nil {
			return nil, fmt.Errorf("ClusterQueue %s in manager: %w", cq.Name, err)
		}
		if err := h.cl.Create(ctx, cq.DeepCopy()); err != nil {
			return nil, fmt.Errorf("ClusterQueue %s in client: %w", cq.Name, err)
		}
		h.cqs[cq.Name] = cq
	}
	rq.ProcessRequeues(ctx) // the set-up's own notifications: nothing is parked yet

	h.rec = core.NewWorkloadReconciler(h.cl, qm, h.cache, &utiltesting.EventRecorder{},
		core.WithPreemptionExpectations(store))
	h.sched = scheduler.New(qm, h.cache, h.cl, &utiltesting.EventRecorder{},
		scheduler.WithFairSharing(sc.FairSharing),
		scheduler.WithClock(nil, h.clk),
		scheduler.WithPreemptionExpectations(store))
	setAdmissionRoutineWrapper(h.sched, routine.NewWrapper(func() { h.wg.Add(1) }, func() { h.wg.Done() }))

	// creation order: submit time, then trace order (whatif/simulator.py build_workloads)
	order := make([]int, len(sc.Workloads))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return sc.Workloads[order[a]].Submit < sc.Workloads[order[b]].Submit })
	for rank, i := range order {
		w := sc.Workloads[i]
		key := w.Namespace + "/" + w.Name
		if _, dup := h.trace[key]; dup {
			return nil, fmt.Errorf("workload %s twice", key)
		}
		h.trace[key] = w
		h.res.Workloads[key] = &WorkloadResult{Admissions: []Admission{}, Preemptions: []int64{}}
		uidRank := rank
		if v.ReverseUIDs {
			uidRank = len(order) - 1 - rank
		}
		h.gen[key] = 0
		h.push(w.Submit, kArrive, key, fmt.Sprintf("%08d", uidRank))
	}
	return h, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (h *harness) push(at int64, kind int, key string, uid string) {
	h.seq++
	k := kind
	if kind == kArrive && h.v.ArrivalsFirst {
		k = -1
	}
	if uid != "" {
		h.uids[key] = uid
	}
	heap.Push(&h.agenda, simEvent{at: at, kind: k, seq: h.seq, key: key, gen: h.gen[key]})
}

func (h *harness) setTime(t int64) {
	h.now = t
	h.clk.SetTime(h.base.Add(time.Duration(t) * time.Second))
}

func (h *harness) loop() error {
	instants := 0
	for {
		next, ok := h.nextTime()
		if !ok {
			return nil
		}
		instants++
		if instants > MaxInstants {
			h.res.Livelock = true
			return nil
		}
		h.setTime(next)
		if !h.v.RequeueLate {
			h.processRequeues()
		}
		for len(h.agenda) > 0 && h.agenda[0].at == next {
			e := heap.Pop(&h.agenda).(simEvent)
			if err := h.handle(e); err != nil {
				return err
			}
		}
		if h.v.RequeueLate {
			h.processRequeues()
		}
		if err := h.settle(); err != nil {
			return err
		}
		if debug {
			fmt.Printf("t=%d heap=%v parked=%v requeueAt=%v cycles=%d\n", h.now, h.queues.Dump(), h.queues.DumpInadmissible(), h.requeueAt, h.res.Cycles)
			for k, w := range h.seen {
				c := apimeta.FindStatusCondition(w.Status.Conditions, kueue.WorkloadQuotaReserved)
				if c != nil {
					fmt.Printf("   %s %s %s: %s\n", k, workload.Status(w), c.Reason, c.Message)
				}
			}
		}
	}
}

var debug = os.Getenv("ORACLE_DEBUG") != ""

func (h *harness) nextTime() (int64, bool) {
	var next int64
	ok := false
	if len(h.agenda) > 0 {
		next, ok = h.agenda[0].at, true
	}
	if h.requeueAt != nil && (!ok || *h.requeueAt < next) {
		next, ok = *h.requeueAt, true
	}
	return next, ok
}

// processRequeues is the requeuer's worker when its delaying queue fires: the ClusterQueues and
// root Cohorts notified (QueueAssociatedInadmissibleWorkloadsAfter -> notifyRetryInadmissible ->
// AddAfter(requeueBatchPeriod)) move their inadmissible workloads back to the heaps.  A key
// already waiting keeps its first due time (workqueue delaying queue), so every notification of
// one instant lands requeueBatchPeriod later, together.
func (h *harness) processRequeues() {
	if h.requeueAt != nil && *h.requeueAt <= h.now {
		h.requeueAt = nil
		h.requeuer.ProcessRequeues(h.ctx)
	}
}

func (h *harness) notified() {
	if h.requeueAt == nil {
		at := h.now + requeueBatchSeconds
		h.requeueAt = &at
	}
}

func (h *harness) handle(e simEvent) error {
	switch e.kind {
	case kArrive, -1:
		return h.arrive(e.key)
	}
	if e.gen != h.gen[e.key] {
		return nil // evicted or re-admitted since
	}
	wl := &kueue.Workload{}
	if err := h.cl.Get(h.ctx, h.nn(e.key), wl); err != nil {
		return err
	}
	var err error
	switch e.kind {
	case kFinish:
		err = workloadfinish.Finish(h.ctx, h.cl, wl, kueue.WorkloadFinishedReasonSucceeded, "done", h.clk)
	case kRelease:
		err = h.release(wl)
	case kCheck:
		err = h.checksReady(wl)
	}
	if err != nil {
		return err
	}
	return h.sync()
}

func (h *harness) nn(key string) types.NamespacedName {
	w := h.trace[key]
	return types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
}

func (h *harness) arrive(key string) error {
	w := h.trace[key]
	ps, err := podSets(w)
	if err != nil {
		return err
	}
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name: w.Name, Namespace: w.Namespace,
			UID:               types.UID(h.uids[key]),
			CreationTimestamp: metav1.NewTime(h.clk.Now()),
		},
		Spec: kueue.WorkloadSpec{
			QueueName: kueue.LocalQueueName(w.Queue),
			PodSets:   ps,
			Priority:  ptr.To(w.Priority),
			Active:    ptr.To(true),
		},
	}
	if err := h.cl.Create(h.ctx, wl); err != nil {
		return err
	}
	got := &kueue.Workload{}
	if err := h.cl.Get(h.ctx, h.nn(key), got); err != nil {
		return err
	}
	// the fake client keeps what it is given; an API server would stamp the creation time
	got.CreationTimestamp = wl.CreationTimestamp
	got.UID = wl.UID
	h.seen[key] = got.DeepCopy()
	h.rec.Create(event.TypedCreateEvent[*kueue.Workload]{Object: got})
	return nil
}

// release is the job reconciler once the evicted job is inactive
// (pkg/controller/jobframework/reconciler.go ReconcileGenericJob, step 6 "handle eviction"):
// the Requeued condition, then QuotaReserved cleared, in one status patch.
func (h *harness) release(wl *kueue.Workload) error {
	ev := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	if ev == nil || ev.Status != metav1.ConditionTrue || !workload.HasQuotaReservation(wl) {
		return nil
	}
	return workloadpatching.PatchAdmissionStatus(h.ctx, h.cl, wl, h.clk, func(wl *kueue.Workload) (bool, error) {
		setRequeued := ev.Reason == kueue.WorkloadEvictedByPreemption || ev.Reason == kueue.WorkloadEvictedDueToNodeFailures
		updated := workload.SetRequeuedCondition(wl, ev.Reason, ev.Message, setRequeued)
		reason := workload.UnadmittedWorkloadReasonWithFallback(
			kueue.WorkloadQuotaReservedReasonPendingEvaluation,
			kueue.WorkloadPending, //nolint:staticcheck // as the reconciler
		)
		if workload.UnsetQuotaReservationWithCondition(wl, reason, ev.Message, h.clk.Now()) {
			updated = true
		}
		return updated, nil
	})
}

// checksReady: the ProvisioningRequest is provisioned (admissionchecks/provisioning
// controller.go syncCheckStates: Ready), and the workload controller's Reconcile sets Admitted
// (workload.SyncAdmittedCondition).
func (h *harness) checksReady(wl *kueue.Workload) error {
	if !workload.HasQuotaReservation(wl) || workloadevict.IsEvicted(wl) {
		return nil
	}
	return workloadpatching.PatchAdmissionStatus(h.ctx, h.cl, wl, h.clk, func(wl *kueue.Workload) (bool, error) {
		for _, c := range wl.Status.AdmissionChecks {
			c.State = kueue.CheckStateReady
			c.Message = "provisioned"
			workloadpatching.SetAdmissionCheckState(&wl.Status.AdmissionChecks, c, h.clk)
		}
		workload.SyncAdmittedCondition(wl, h.clk.Now())
		return true, nil
	})
}

// checksPending: the workload controller adds a Pending state per check of its ClusterQueue
// once it holds quota (workload_controller.go reconcileSyncAdmissionChecks).
func (h *harness) checksPending(wl *kueue.Workload) (bool, error) {
	cq := h.cqs[string(wl.Status.Admission.ClusterQueue)]
	if cq == nil {
		return false, nil
	}
	checks := workload.AdmissionChecksForWorkload(h.log, wl, cq)
	if len(checks) == 0 {
		return false, nil
	}
	err := workloadpatching.PatchAdmissionStatus(h.ctx, h.cl, wl, h.clk, func(wl *kueue.Workload) (bool, error) {
		for _, name := range sets.List(checks) {
			workloadpatching.SetAdmissionCheckState(&wl.Status.AdmissionChecks, kueue.AdmissionCheckState{
				Name: name, State: kueue.CheckStatePending, Message: "provisioning",
			}, h.clk)
		}
		return true, nil
	})
	return true, err
}

// settle runs scheduling cycles at this instant, as Kueue's loop does while its heaps hold
// workloads, until the cycles change nothing Kueue keeps outside its scheduler (heaps, parked
// workloads, each workload's status and admission) for long enough that every workload in the
// heaps has been a head twice (one head per ClusterQueue a cycle: a head with flavors left in
// its scan goes back to the heap and resumes later), or Variant.MaxCycles.
func (h *harness) settle() error {
	prev := h.fingerprint()
	quiet := 0
	for i := 0; i < h.v.MaxCycles; i++ {
		if len(h.queues.Dump()) == 0 {
			return nil
		}
		scheduleCycle(h.sched, h.ctx)
		h.res.Cycles++
		h.wg.Wait()
		if debug && i < 3 {
			snap, _ := h.cache.Snapshot(h.ctx)
			for name, c := range snap.ClusterQueues() {
				fmt.Printf("  cycle %d cq %s usage %v workloads %d\n", h.res.Cycles, name, c.ResourceNode.Usage, len(c.Workloads))
			}
		}
		if err := h.sync(); err != nil {
			return err
		}
		fp := h.fingerprint()
		if fp == prev {
			quiet++
			if quiet >= 2+2*h.heapLen() {
				return nil
			}
		} else {
			quiet = 0
		}
		prev = fp
	}
	h.res.Unsettled = true
	return nil
}

func (h *harness) heapLen() int {
	n := 0
	for _, wls := range h.queues.Dump() {
		n += len(wls)
	}
	return n
}

// fingerprint: what a cycle can change that decides what happens next -- not the status
// messages, which name the flavors a scan just tried.
func (h *harness) fingerprint() string {
	keys := sortedKeys(h.seen)
	state := make([]string, 0, len(keys))
	for _, k := range keys {
		w := h.seen[k]
		s := k + "=" + workload.Status(w)
		if w.Status.Admission != nil {
			s += fmt.Sprint(flavors(w))
		}
		if workloadevict.IsEvicted(w) {
			s += "/evicted"
		}
		state = append(state, s)
	}
	dump, parked := h.queues.Dump(), h.queues.DumpInadmissible()
	for _, m := range []map[kueue.ClusterQueueReference][]workload.Reference{dump, parked} {
		for _, wls := range m {
			sort.Slice(wls, func(i, j int) bool { return wls[i] < wls[j] })
		}
	}
	return fmt.Sprint(dump, parked, state)
}

// sync is the informer: every workload whose object changed is delivered to the workload
// controller's Update handler (old, new), in name order, and the harness reads the
// transitions it records (admission, eviction) and schedules what follows them.
func (h *harness) sync() error {
	for changed := true; changed; {
		changed = false
		wls := &kueue.WorkloadList{}
		if err := h.cl.List(h.ctx, wls); err != nil {
			return err
		}
		sort.Slice(wls.Items, func(i, j int) bool {
			return wls.Items[i].Namespace+"/"+wls.Items[i].Name < wls.Items[j].Namespace+"/"+wls.Items[j].Name
		})
		for i := range wls.Items {
			nw := wls.Items[i].DeepCopy()
			key := nw.Namespace + "/" + nw.Name
			old := h.seen[key]
			if old == nil || old.ResourceVersion == nw.ResourceVersion {
				continue
			}
			nw.CreationTimestamp = old.CreationTimestamp
			nw.UID = old.UID
			h.seen[key] = nw.DeepCopy()
			h.rec.Update(event.TypedUpdateEvent[*kueue.Workload]{ObjectOld: old, ObjectNew: nw})
			more, err := h.observe(key, old, nw)
			if err != nil {
				return err
			}
			changed = changed || more
		}
	}
	return nil
}

func (h *harness) observe(key string, old, nw *kueue.Workload) (bool, error) {
	prev, cur := workload.Status(old), workload.Status(nw)
	res := h.res.Workloads[key]
	if workload.FromQuotaReservedOrAdmittedToPending(prev, cur) || (cur == workload.StatusFinished && prev != cur) {
		h.notified() // QueueAssociatedInadmissibleWorkloadsAfter in Update
	}
	if !workloadevict.IsEvicted(old) && workloadevict.IsEvicted(nw) && workload.HasQuotaReservation(nw) {
		res.Preemptions = append(res.Preemptions, h.now)
		h.gen[key]++
		h.push(h.now+h.sc.EvictionDelaySeconds, kRelease, key, "")
	}
	if prev == workload.StatusPending && cur == workload.StatusQuotaReserved {
		h.gen[key]++
		added, err := h.checksPending(nw)
		if err != nil {
			return false, err
		}
		if added {
			h.push(h.now+h.sc.ProvisioningDelaySeconds, kCheck, key, "")
			return true, nil
		}
	}
	if prev != workload.StatusAdmitted && cur == workload.StatusAdmitted {
		if prev == workload.StatusPending {
			h.gen[key]++
		}
		res.Admissions = append(res.Admissions, Admission{
			Time: h.now, ClusterQueue: string(nw.Status.Admission.ClusterQueue), Flavors: flavors(nw),
		})
		h.push(h.now+h.trace[key].Duration, kFinish, key, "")
	}
	return false, nil
}

func flavors(wl *kueue.Workload) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		m := map[string]string{}
		for res, f := range psa.Flavors {
			m[string(res)] = string(f)
		}
		out[string(psa.Name)] = m
	}
	return out
}
