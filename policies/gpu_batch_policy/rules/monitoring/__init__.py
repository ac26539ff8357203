"""Rules that judge monitoring as code: scrape targets, PromQL in dashboards and alerts, metric
catalogues (Kueue, KubeRay, Ray, DCGM) and double DCGM exporters.

Each module defines ``POLICIES``; ``runtime/registry.py`` gathers them.
"""
