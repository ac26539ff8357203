"""Rules that judge objects as the API server does before any controller sees them: built-in objects
against the cluster minor's OpenAPI schema, custom resources against their CRDs and CEL, quantities.

Each module defines ``POLICIES``; ``runtime/registry.py`` gathers them.
"""
