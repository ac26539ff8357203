"""Kueue topology-aware scheduling (TAS) on GKE: the shared facts and Kueue's own validation.

- :mod:`.levels` -- GKE's topology node labels, the Topology levels cluster-toolkit declares per GPU
  family, and which machine types GKE labels;
- :mod:`.annotations` -- Kueue v0.19.2's pod-set topology annotations and their webhook validation;
- :mod:`.flavor_match` -- whether a flavor's TAS setting lets Kueue give it to a pod set (pack, what-if
  and the live tier share it).
"""
