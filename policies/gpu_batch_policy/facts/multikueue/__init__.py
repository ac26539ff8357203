"""MultiKueue: a manager cluster dispatching Kueue workloads to worker clusters.

``kubeconfig`` re-states the checks Kueue's MultiKueueCluster controller applies to a worker
kubeconfig; ``clusters`` splits any program's Kubernetes objects into the clusters they are
sent to (one per Kubernetes provider) and finds the manager and its workers.
"""
