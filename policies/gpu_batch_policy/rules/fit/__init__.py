"""The cluster-fit rule modules: every module defines ``POLICIES`` from the ``facts.fit`` helpers
(``placement``, ``allocatable``, ``network``, ...) and ``runtime.registry.ALL_POLICIES`` gathers them."""
