"""Admission fair sharing (Kueue v0.19.2): LocalQueue usage orders a ClusterQueue's workloads.

``settings`` reads the Configuration and the queues, ``usage`` and ``ledger`` port Kueue's
arithmetic and ledger, ``model`` moves the ledger as the simulation runs, ``heads`` picks a
usage-based ClusterQueue's head.
"""
