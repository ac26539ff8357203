package oracle

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The harness's own tests: whole runs whose Kueue behaviour is stated in Kueue's code
// (kubernetes-sigs/kueue@v0.19.2), so a harness that drops a step (the release, the batched
// requeue, the check) fails here before it skews the differential.

func objectsJSON(t *testing.T, docs ...string) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, 0, len(docs))
	for _, d := range docs {
		if !json.Valid([]byte(d)) {
			t.Fatalf("invalid JSON: %s", d)
		}
		out = append(out, json.RawMessage(d))
	}
	return out
}

const (
	flavorL4 = `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"l4"},"spec":{}}`
	lqTeamA  = `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue","metadata":{"name":"user-queue","namespace":"team-a"},"spec":{"clusterQueue":"cq"}}`
)

func cq(extra string) string {
	return `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"cq"},"spec":{` +
		`"namespaceSelector":{},"resourceGroups":[{"coveredResources":["nvidia.com/gpu"],` +
		`"flavors":[{"name":"l4","resources":[{"name":"nvidia.com/gpu","nominalQuota":"2"}]}]}]` + extra + `}}`
}

func gpuWl(name string, submit, duration int64, gpus string, priority int32) TraceWorkload {
	return TraceWorkload{
		Name: name, Namespace: "team-a", Queue: "user-queue", Priority: priority, Submit: submit, Duration: duration,
		PodSets: []TracePodSet{{Name: "workers", Count: 1, Requests: map[string]string{"nvidia.com/gpu": gpus}}},
	}
}

func admittedAt(r Result, key string) []int64 {
	var out []int64
	for _, a := range r.Workloads[key].Admissions {
		out = append(out, a.Time)
	}
	return out
}

func mustRun(t *testing.T, sc Scenario) Result {
	t.Helper()
	r := Run(sc, Variants[0])
	if r.Error != "" {
		t.Fatalf("run: %s", r.Error)
	}
	return r
}

// A preemptor evicts at 10; the victim's quota counts until its job is stopped
// (jobframework ReconcileGenericJob step 6) 30 s later, then the Update handler
// (FromQuotaReservedOrAdmittedToPending) frees it and the preemptor is admitted.
func TestVictimReleasesQuotaAfterEvictionDelay(t *testing.T) {
	sc := Scenario{
		ID:      "release",
		Objects: objectsJSON(t, flavorL4, cq(`,"preemption":{"withinClusterQueue":"LowerPriority"}`), lqTeamA),
		Workloads: []TraceWorkload{
			gpuWl("v", 0, 1000, "2", 0),
			gpuWl("p", 10, 50, "2", 10),
		},
		EvictionDelaySeconds: 30,
	}
	r := mustRun(t, sc)
	if got := r.Workloads["team-a/v"].Preemptions; !reflect.DeepEqual(got, []int64{10}) {
		t.Errorf("v preempted at %v, want [10]", got)
	}
	if got := admittedAt(r, "team-a/p"); !reflect.DeepEqual(got, []int64{40}) {
		t.Errorf("p admitted at %v, want [40]", got)
	}
	// v is requeued at once by the Update handler and is admitted when p finishes at 90,
	// itself through the 1 s batched requeue: it was parked (inadmissible) before.
	if got := admittedAt(r, "team-a/v"); !reflect.DeepEqual(got, []int64{0, 91}) {
		t.Errorf("v admitted at %v, want [0 91]", got)
	}
	if got := r.Workloads["team-a/v"].Admissions[0].Flavors["workers"]["nvidia.com/gpu"]; got != "l4" {
		t.Errorf("v's flavor %q, want l4", got)
	}
}

// A workload parked as inadmissible comes back through the requeuer's batch: a finish at 100
// notifies the ClusterQueue, and its workloads move back to the heap requeueBatchPeriod (1 s)
// later (inadmissible_workloads.go workqueueRequeuer.notifyClusterQueue, AddAfter).
func TestParkedWorkloadReturnsInOneSecondBatch(t *testing.T) {
	sc := Scenario{
		ID:      "batch",
		Objects: objectsJSON(t, flavorL4, cq(""), lqTeamA),
		Workloads: []TraceWorkload{
			gpuWl("a", 0, 100, "2", 0),
			gpuWl("b", 5, 10, "1", 0),
			gpuWl("c", 6, 10, "1", 0),
		},
	}
	r := mustRun(t, sc)
	if got := admittedAt(r, "team-a/b"); !reflect.DeepEqual(got, []int64{101}) {
		t.Errorf("b admitted at %v, want [101]", got)
	}
	if got := admittedAt(r, "team-a/c"); !reflect.DeepEqual(got, []int64{101}) {
		t.Errorf("c admitted at %v, want [101]", got)
	}
}

// StrictFIFO: the head is not parked (requeueIfNotPresent keeps it in the heap), so it is
// admitted in the instant the finish frees the quota, with no batch delay.
func TestStrictFIFOHeadIsAdmittedAtTheFinish(t *testing.T) {
	sc := Scenario{
		ID:      "strict",
		Objects: objectsJSON(t, flavorL4, cq(`,"queueingStrategy":"StrictFIFO"`), lqTeamA),
		Workloads: []TraceWorkload{
			gpuWl("a", 0, 100, "2", 0),
			gpuWl("b", 5, 10, "2", 0),
		},
	}
	r := mustRun(t, sc)
	if got := admittedAt(r, "team-a/b"); !reflect.DeepEqual(got, []int64{100}) {
		t.Errorf("b admitted at %v, want [100]", got)
	}
	if r.Unsettled {
		t.Errorf("a blocked StrictFIFO head that changes nothing settles")
	}
}

// A ProvisioningRequest check: quota is reserved at once, Admitted only when the check is
// Ready (workload.SyncAdmittedCondition), provisioningDelaySeconds later; it finishes its
// duration after that.
func TestProvisioningCheckAdmitsAfterTheDelay(t *testing.T) {
	check := `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"AdmissionCheck","metadata":{"name":"dws"},` +
		`"spec":{"controllerName":"kueue.x-k8s.io/provisioning-request"}}`
	sc := Scenario{
		ID:      "prov",
		Objects: objectsJSON(t, flavorL4, check, cq(`,"admissionChecksStrategy":{"admissionChecks":[{"name":"dws"}]}`), lqTeamA),
		Workloads: []TraceWorkload{
			gpuWl("a", 0, 100, "2", 0),
			gpuWl("b", 1, 10, "2", 0),
		},
		ProvisioningDelaySeconds: 30,
	}
	r := mustRun(t, sc)
	if got := admittedAt(r, "team-a/a"); !reflect.DeepEqual(got, []int64{30}) {
		t.Errorf("a admitted at %v, want [30]", got)
	}
	// a holds quota 0..130; b is parked, requeued at 131, reserved then, admitted at 161
	if got := admittedAt(r, "team-a/b"); !reflect.DeepEqual(got, []int64{161}) {
		t.Errorf("b admitted at %v, want [161]", got)
	}
}

// The UID variant changes who goes first between equal priorities and creation times
// (baseCompareFunc: cmp.Compare(a.Obj.UID, b.Obj.UID)).
func TestReversedUIDsBreakACreationTie(t *testing.T) {
	sc := Scenario{
		ID:      "tie",
		Objects: objectsJSON(t, flavorL4, cq(""), lqTeamA),
		Workloads: []TraceWorkload{
			gpuWl("a", 0, 100, "2", 0),
			gpuWl("b", 0, 100, "2", 0),
		},
	}
	base := Run(sc, Variants[0])
	rev := Run(sc, Variants[1])
	if got := admittedAt(base, "team-a/a"); !reflect.DeepEqual(got, []int64{0}) {
		t.Errorf("base: a admitted at %v, want [0]", got)
	}
	if got := admittedAt(rev, "team-a/b"); !reflect.DeepEqual(got, []int64{0}) {
		t.Errorf("reversed UIDs: b admitted at %v, want [0]", got)
	}
}
