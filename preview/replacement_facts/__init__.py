"""Provider facts the plan diff classifies input paths with: which change replaces a resource.

Data, not code: ``gcp.json`` is derived from terraform-provider-google-beta's resource schemas
(:mod:`.derive`, run by a maintainer against the provider's source at a tag) and
``kubernetes.json`` holds pulumi-kubernetes' replace-on-change table.  Each entry cites its
upstream file and tag.
"""
