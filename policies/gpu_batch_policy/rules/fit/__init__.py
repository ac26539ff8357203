"""The cluster-fit rule modules: every module defines ``POLICIES`` from the ``fit`` helpers
(``placement``, ``allocatable``, ``network``, ...) and ``registry.ALL_POLICIES`` gathers them."""
