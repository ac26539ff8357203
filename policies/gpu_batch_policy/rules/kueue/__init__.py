"""Rules that judge Kueue's objects and install: quotas, flavors, cohorts, fair sharing, admission checks,
references, topology-aware scheduling, queue labels and the gangs Kueue must admit (Kueue v0.19.2).

Each module defines ``POLICIES``; ``runtime/registry.py`` gathers them.
"""
