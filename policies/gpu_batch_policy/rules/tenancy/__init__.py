"""Rules that judge tenant isolation and exposure: NetworkPolicies, Pod Security, ServiceAccounts that
escalate, ingress exposure, SkyPilot API servers, tenant pods steered onto the operators' pool.

Each module defines ``POLICIES``; ``runtime/registry.py`` gathers them.
"""
