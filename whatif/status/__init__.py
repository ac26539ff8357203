"""``python -m whatif.status``: why is my job pending, and when will it start? (issue 43)

For a team member with only the team's Role: read the live state (or a ``kubectl get -o yaml``
dump), give every pending Kueue Workload Kueue's own reason in plain words with what would have
to change, and an ETA from a replay of the what-if simulator from the current state; KAI
PodGroups get KAI's own reasons.  Modules: ``reads`` (the API reads and who may make them),
``collect`` (the state those reads give, and what was not visible), ``explain`` (Kueue's and
KAI's reasons), ``replay`` (the ETA), ``kai`` and ``kai_replay`` (KAI PodGroups), ``render`` (table, JSON, one line), ``cli``.
"""
