"""Dashboards and alert policies generated from the stack's queues and GPU pools.

``queries``: the PromQL, one function per panel/alert, with the upstream metric and label names
cited; ``dashboard``: the stack's Cloud Monitoring dashboard (more pages past 40 tiles);
``alerts``: the alert policies, one per team.
The pack checks every query (rules/monitoring_queries.py): it parses, and each Kueue metric is
exported under the stack's Kueue configuration.
"""
