"""Pulumi ComponentResources of gpu-batch.  They take typed arguments and know nothing about
stack files; type tokens are ``gpu-batch:<module>:<Name>`` and stay stable (they are part of
every child's URN)."""
