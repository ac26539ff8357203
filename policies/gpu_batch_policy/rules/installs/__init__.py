"""Rules that judge Helm installs and their agreement: charts that render, CRDs Helm never upgrades,
settings that must agree across releases, known bugs of the pinned versions.

Each module defines ``POLICIES``; ``runtime/registry.py`` gathers them.
"""
