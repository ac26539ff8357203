"""Benchmarks that print figures (``python -m benchmarks.<name>``; ``make bench`` and friends).

Several read the pack's own code (its cache root, its policies); ``preview``'s package makes the
pack's package importable as ``gpu_batch_policy``, once, for both.
"""

import preview  # noqa: F401 - puts the pack's package on sys.path (preview/__init__.py)
