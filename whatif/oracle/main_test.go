package oracle

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"sigs.k8s.io/kueue/pkg/features"
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard()) // the workload controller logs through the global logger
	// Status writes as JSON merge patches (pkg/workload/patching patchStatus), one of the two
	// ways TestSchedule runs every case: the fake client takes an apply patch as a strategic
	// merge (pkg/util/testing TreatSSAAsStrategicMerge), which cannot drop a field the applier
	// leaves out -- a released victim would keep status.admission, where the API server's
	// server-side apply removes it.  The merge patch leaves the object as the API server would.
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
		string(features.WorkloadRequestUseMergePatch): true,
	}); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// TestOracle replays the scenarios of the file named by ORACLE_SCENARIOS (one JSON scenario a
// line) through Kueue v0.19.2 under every Variant (or those named, comma-separated, in
// ORACLE_VARIANTS) and writes one JSON Result a line to ORACLE_OUT.  Skipped without them: the
// scenarios come from benchmarks/differential_whatif.py.
func TestOracle(t *testing.T) {
	in, out := os.Getenv("ORACLE_SCENARIOS"), os.Getenv("ORACLE_OUT")
	if in == "" || out == "" {
		t.Skip("ORACLE_SCENARIOS and ORACLE_OUT not set")
	}
	variants := Variants
	if names := os.Getenv("ORACLE_VARIANTS"); names != "" {
		variants = nil
		for _, v := range Variants {
			if strings.Contains(","+names+",", ","+v.Name+",") {
				variants = append(variants, v)
			}
		}
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	enc := json.NewEncoder(w)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var s Scenario
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("scenario: %v", err)
		}
		for _, v := range variants {
			if err := enc.Encode(Run(s, v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
