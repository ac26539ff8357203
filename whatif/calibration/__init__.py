"""Calibration: the simulator checked against Kueue's own scheduler performance harness.

Kueue's harness (kubernetes-sigs/kueue@v0.19.2 ``test/performance/scheduler``) generates cohorts
of ClusterQueues and classes of workloads (``configs/*/generator.yaml``), runs them through
Kueue's scheduler in real time, and its checker (``checker/checker_test.go``) asserts ranges
(``configs/*/rangespec.yaml``): the mean time to admission per workload class and the usage per
ClusterQueue class.  ``harness`` states those configurations and ranges as facts, ``replay``
replays them through the what-if simulator in simulated time and summarises the run the way the
harness's recorder does, and ``python -m whatif.calibration`` prints the comparison table of
``whatif/README.md``.  Nothing upstream is copied or fetched.
"""
