"""The what-if for KAI Scheduler v0.17.0 queues (kai-scheduler/KAI-Scheduler at tag ``v0.17.0``).

``proportion`` (deserved quota, fair share, limits, reclaim rules), ``cluster`` (nodes, pods,
placement, fractional GPUs), ``session`` (the allocate / reclaim / preempt actions),
``simulator`` (time), ``model`` (the stack's queues, priority classes and nodes),
``workloads`` (trace entries as PodGroups), ``results`` / ``section`` (figures and the report),
``run`` (one run, and load-profile shapes as KAI gangs them).
"""
