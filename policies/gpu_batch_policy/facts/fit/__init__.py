"""Cluster fit: can the declared node pools hold, reach and run what the stack installs?

The rules here judge the pods a stack declares *and* the objects its Helm releases render (both
reach the model as ``KubeObject``s) against the GKE node pools: which pools a pod may land on
(``placement``), how much of a node it may use (``allocatable``), whether always-on workloads fit
the system pool, whether private nodes can pull their images and whether a private control plane
can reach the admission webhooks.  ``placement`` and ``allocatable`` are the reusable API.
"""
