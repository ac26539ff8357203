"""What-if: an offline discrete-event simulator of Kueue v0.19 admission for a stack.

``python -m whatif --stack dev`` (or ``--manifests FILE``) replays a workload trace against the
stack's Kueue objects and reports, per ClusterQueue, admissions, preemptions, waits, GPU use and
starved workloads.  The rules are ported from kubernetes-sigs/kueue at tag v0.19.2; each module
names the upstream file and function it follows.  What is not modelled is refused with one line
(see ``whatif/README.md``).
"""
