"""The analysis host's gRPC client runtime: the engine's stand-in, as cheap per call as grpcio allows.

Under ``pulumi preview --policy-pack`` the engine's analyzer client is Go (grpc-go).  The offline
preview's stand-in for it, :mod:`preview.analysis_host`, is Python, and the chain of
``Remediate`` + ``Analyze`` calls it sends one at a time (the engine's order) is what ends a
1,000-team preview: on this project's 2-vCPU VM a bare grpcio 1.85.1 round trip to a servicer
that does nothing costs 1.9-2.2 ms per pair of calls, 0.8-0.9 ms of it the client's own CPU.
What the pack must see is the engine's calls, in the engine's order, with the engine's
environment; what the stand-in itself costs per call is this tool's own overhead.

grpc-core runs its client connections on EventEngine endpoints by default; the experiment
``event_engine_client`` switches that (``GRPC_EXPERIMENTS=-event_engine_client``, read once when
grpc-core starts).  With it off, the same pair costs 1.4-1.7 ms and the client 0.5-0.6 ms
(three alternating runs of 5,000 pairs each).  So the host turns it off for itself.

What is not changed:

* The pack.  It serves the calls on its own grpc-core server with whatever environment the
  engine hands it, which is the user's: :func:`pack_environment` takes the setting out again,
  so the pack runs exactly as under the CLI.
* A user's own ``GRPC_EXPERIMENTS``: when one is set, the host and the pack both keep it.
* Any other grpcio: experiment names are grpc-core internals that come and go between releases
  (an unknown one prints an error line at start), so the setting is applied only with the
  release it was measured on, :data:`MEASURED_GRPCIO` (the version both requirements files pin;
  ``tests/test_engine_grpc.py`` fails when the installed one no longer knows the name).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import Final

MEASURED_GRPCIO: Final = "1.85.1"
HOST_EXPERIMENTS: Final = "-event_engine_client"
VARIABLE: Final = "GRPC_EXPERIMENTS"
# Set beside the host's GRPC_EXPERIMENTS when the host added it, so the pack's environment can
# be the user's again.
ADDED_MARK: Final = "GPU_BATCH_HOST_GRPC_EXPERIMENTS"


def grpcio_version() -> str | None:
    try:
        return metadata.version("grpcio")
    except metadata.PackageNotFoundError:
        return None


def host_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The analysis host's environment: ``environ`` with the client setting added, when the user
    set no experiments of their own and grpcio is the measured release."""
    env = dict(environ)
    if VARIABLE in env or grpcio_version() != MEASURED_GRPCIO:
        return env
    env[VARIABLE] = HOST_EXPERIMENTS
    env[ADDED_MARK] = HOST_EXPERIMENTS
    return env


def pack_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment the pack is started with: ``environ`` without what
    :func:`host_environment` added, i.e. the user's, as the engine passes it on."""
    env = dict(environ)
    added = env.pop(ADDED_MARK, None)
    if added is not None and env.get(VARIABLE) == added:
        del env[VARIABLE]
    return env
