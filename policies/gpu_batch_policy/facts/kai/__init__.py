"""KAI Scheduler's view of a stack: the queue tree (``tree``), queue quota arithmetic
(``quota``) and which workloads are non-preemptible (``priority``), as KAI computes them."""
