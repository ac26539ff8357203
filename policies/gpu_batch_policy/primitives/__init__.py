"""Primitives: parsing and small values that know nothing about a stack.

Kubernetes quantities and names, Go durations, wire type tokens, the plain-value readers of SDK
properties, bounded caches, GKE version strings, the project's cache root.  A module here imports
only other primitives (``tests/policies/test_layers.py`` holds the pack to runtime → rules → facts
→ primitives).
"""
