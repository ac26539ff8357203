"""Rules that judge KAI Scheduler's queues, PodGroups, topology annotations and runtime class (KAI v0.17.0).

Each module defines ``POLICIES``; ``runtime/registry.py`` gathers them.
"""
