"""Rules that judge GPUDirect: the node networks GKE refuses or NCCL falls back on, and the wiring a GPU
pod on a GPUDirect pool needs.

Each module defines ``POLICIES``; ``runtime/registry.py`` gathers them.
"""
