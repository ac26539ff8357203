"""Schema and CEL validation of custom resources, as the API server does it on create.

One code path for the pack and the offline preview (the preview imports this package):

- :mod:`.markers` -- how a value not known before deploy (or a secret) is written;
- :mod:`.cel` -- a CRD's own ``x-kubernetes-validations`` rules, run with cel-python;
- :mod:`.crd` -- the strict structural-schema walk, the CRD catalog and its verdicts;
- :mod:`.pinned` -- the CRDs of the pinned charts (``charts.lock.yaml``), of the stack's Helm
  releases, and the CRDs a stack declares itself.
"""
