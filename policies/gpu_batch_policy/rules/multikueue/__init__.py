"""Rules that judge MultiKueue: a manager that cannot reach its workers, or workers that cannot admit
what it dispatches.

Each module defines ``POLICIES``; ``runtime/registry.py`` gathers them.
"""
