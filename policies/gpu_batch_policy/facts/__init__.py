"""Facts about a stack: what its resources mean, read the way the systems that act on them read it.

Typed views of any program's resources (``model``), the objects its Helm releases render
(``charts``), schemas and CEL (``schema``), and one subpackage or module per concern: node pools
and what fits on them (``pools``, ``fit``), Kueue's installs, capacity and demand, KAI's queue
tree (``kai``), topology (``tas``), GPUDirect profiles, metrics catalogues, workload kinds, RBAC,
admission policies, known bugs of the pins.  Facts never report: rules do.  A module here imports
facts and primitives only (``tests/policies/test_layers.py``).
"""
