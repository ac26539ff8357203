package oracle

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
)

// Scenario is one file entry written by benchmarks/differential_whatif (Python): the Kueue
// objects as v1beta2 manifests (the same documents the what-if reads), Kueue's Configuration
// fairSharing, and the trace.
type Scenario struct {
	ID                       string                 `json:"id"`
	Family                   string                 `json:"family"`
	FairSharing              *configapi.FairSharing `json:"fairSharing"`
	Objects                  []json.RawMessage      `json:"objects"`
	Workloads                []TraceWorkload        `json:"workloads"`
	EvictionDelaySeconds     int64                  `json:"evictionDelaySeconds"`
	ProvisioningDelaySeconds int64                  `json:"provisioningDelaySeconds"`
}

// TraceWorkload is the what-if trace's workload (whatif/README.md "Trace format").
type TraceWorkload struct {
	Name      string        `json:"name"`
	Namespace string        `json:"namespace"`
	Queue     string        `json:"queue"`
	Priority  int32         `json:"priority"`
	Submit    int64         `json:"submit"`
	Duration  int64         `json:"duration"`
	PodSets   []TracePodSet `json:"podSets"`
}

type TracePodSet struct {
	Name         string              `json:"name"`
	Count        int32               `json:"count"`
	Requests     map[string]string   `json:"requests"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
}

type objects struct {
	flavors      []*kueue.ResourceFlavor
	cohorts      []*kueue.Cohort
	clusterQueue []*kueue.ClusterQueue
	localQueues  []*kueue.LocalQueue
	checks       []*kueue.AdmissionCheck
}

type kindOnly struct {
	Kind string `json:"kind"`
}

// decodeObjects reads the manifests onto the objects Kueue's test wrappers start from
// (pkg/util/testing/v1beta2 MakeClusterQueue etc.: the CRD defaults its tests rely on), so a
// field the manifest leaves out has the value the API server's defaulting would give it.
func decodeObjects(raw []json.RawMessage) (objects, error) {
	var out objects
	for i, r := range raw {
		var k kindOnly
		if err := json.Unmarshal(r, &k); err != nil {
			return out, fmt.Errorf("objects[%d]: %w", i, err)
		}
		var err error
		switch k.Kind {
		case "ResourceFlavor":
			o := utiltestingapi.MakeResourceFlavor("").Obj()
			err = json.Unmarshal(r, o)
			out.flavors = append(out.flavors, o)
		case "Cohort":
			o := utiltestingapi.MakeCohort("").Obj()
			err = json.Unmarshal(r, o)
			out.cohorts = append(out.cohorts, o)
		case "ClusterQueue":
			o := utiltestingapi.MakeClusterQueue("").Obj()
			err = json.Unmarshal(r, o)
			out.clusterQueue = append(out.clusterQueue, o)
		case "LocalQueue":
			o := utiltestingapi.MakeLocalQueue("", "").Obj()
			err = json.Unmarshal(r, o)
			out.localQueues = append(out.localQueues, o)
		case "AdmissionCheck":
			o := &kueue.AdmissionCheck{}
			err = json.Unmarshal(r, o)
			out.checks = append(out.checks, o)
		case "ProvisioningRequestConfig", "ConfigMap":
			// read by the what-if; here the check's timing is the scenario's provisioningDelaySeconds
		default:
			err = fmt.Errorf("kind %q is not used by the oracle", k.Kind)
		}
		if err != nil {
			return out, fmt.Errorf("objects[%d] (%s): %w", i, k.Kind, err)
		}
	}
	return out, nil
}

func podSets(w TraceWorkload) ([]kueue.PodSet, error) {
	out := make([]kueue.PodSet, 0, len(w.PodSets))
	for _, ps := range w.PodSets {
		p := utiltestingapi.MakePodSet(kueue.PodSetReference(ps.Name), int(ps.Count)).Obj()
		req := corev1.ResourceList{}
		for name, q := range ps.Requests {
			v, err := resource.ParseQuantity(q)
			if err != nil {
				return nil, fmt.Errorf("workload %s pod set %s: %s: %w", w.Name, ps.Name, name, err)
			}
			req[corev1.ResourceName(name)] = v
		}
		p.Template.Spec.Containers[0].Resources.Requests = req
		p.Template.Spec.Tolerations = ps.Tolerations
		p.Template.Spec.NodeSelector = ps.NodeSelector
		out = append(out, *p)
	}
	return out, nil
}
