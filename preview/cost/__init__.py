"""Each team's GPU bill, estimated from the stack: quota -> flavor -> node pool -> machine type,
provisioning model and region -> a cited node-hour price.

``prices`` holds the price table (shipped data plus the stack's ``gpuPrices``), ``estimate``
the per-queue figures written to ``build/<stack>/cost.json``, ``section`` the report's Markdown
and the per-team change against a base plan.  A figure without a price is "unpriced" (None in
JSON), and the total it belongs to is marked incomplete: nothing is ever priced at $0.
"""
