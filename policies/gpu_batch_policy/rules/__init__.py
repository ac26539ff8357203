"""The pack's policies, a subpackage per system they judge (Kueue, KAI, KubeRay, GKE, GPUDirect,
cluster fit, tenancy, monitoring, MultiKueue, the API server, admission webhooks, installs).

Every rule module defines ``POLICIES`` (a list of policies) and ``runtime/registry.py`` gathers
them.  Rule modules build on ``kit/`` (factories, guard, report); the kit imports no rule module.
"""
