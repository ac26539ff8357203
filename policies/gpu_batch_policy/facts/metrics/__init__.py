"""What each scraped project exports at its pinned version, and under which settings.

``kueue``: every metric of kubernetes-sigs/kueue v0.19.2 ``pkg/metrics/metrics.go`` with the
setting it needs; ``promql``: the metric names a PromQL string reads (promql-parser).
"""
