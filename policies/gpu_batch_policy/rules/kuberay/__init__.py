"""Rules that judge what the KubeRay operator accepts from a Ray object beyond its webhook (KubeRay v1.7.0).

Each module defines ``POLICIES``; ``runtime/registry.py`` gathers them.
"""
