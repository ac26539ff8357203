"""Rules that judge GKE: clusters and node pools (queued provisioning, flex-start), the GPU driver and
device-plugin stack, Dynamic Workload Scheduler wiring, GCS FUSE mounts and who can reach the cluster.

Each module defines ``POLICIES``; ``runtime/registry.py`` gathers them.
"""
