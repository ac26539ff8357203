"""The pack's rule modules, one topic each: every module defines ``POLICIES`` (a list of policies)
and ``registry.ALL_POLICIES`` gathers them.  The cluster-fit rules live in ``fit/rules/``."""
