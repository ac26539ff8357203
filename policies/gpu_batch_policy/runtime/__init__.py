"""The runtime that serves the engine: what ``policies/__main__.py`` wires together.

``registry`` gathers every rule module's ``POLICIES`` into ``ALL_POLICIES``; ``servicer_guard``
keeps the analyzer servicer alive on malformed requests; ``sdk_speedups`` patches the SDK's
property conversion for large stacks.  The top layer: it may import rules, facts and primitives;
nothing imports it but the entry point (``tests/policies/test_layers.py``).
"""
