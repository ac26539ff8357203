"""Which chart, at which version, from where: read from a ``kubernetes:helm.sh/v3:Release``.

A v3 Release names its chart in one of two ways (pulumi_kubernetes ``helm.v3.Release`` inputs
``chart``, ``version``, ``repositoryOpts.repo``; the same forms ``helm install`` accepts):

- an OCI reference, ``chart: oci://registry.k8s.io/kueue/charts/kueue`` with ``version: 0.19.2``;
- a classic repository, ``chart: kuberay-operator`` with ``repositoryOpts.repo:
  https://ray-project.github.io/kuberay-helm/``.

Anything else (a local path, a ``repo/name`` alias of the user's helm config, an archive URL, no
version) cannot be pinned reproducibly from the stack alone, so it is reported as unsupported
rather than guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# The cache and mirror folder ``<name>-<version>`` is one path component: at most 255 bytes on
# every file system the pack runs on (Linux NAME_MAX, macOS, Windows).  Longer names are refused
# here, as a finding, rather than by the file system as an OSError.  (An OCI tag, which is how an
# oci:// chart version is published, is at most 128 characters: opencontainers/distribution-spec
# spec.md, "<reference> as a tag MUST be at most 128 characters".)
MAX_FOLDER_BYTES: Final = 255


class UnsupportedChartError(ValueError):
    """The release names its chart in a way that cannot be resolved from the stack alone."""


@dataclass(frozen=True)
class ChartReference:
    """A pinned chart: ``name`` and ``version`` as in ``Chart.yaml``, and where it is published.

    ``source`` is the ``oci://…/<name>`` reference, or the repository URL when ``oci`` is False.
    The cache and mirror folder is ``<name>-<version>``, the layout of the unpacked ``.tgz``.
    """

    name: str
    version: str
    source: str

    @property
    def oci(self) -> bool:
        return self.source.startswith("oci://")

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def location(self) -> str:
        """Where upstream publishes it, as a person would type it."""
        return self.source if self.oci else f"{self.source.rstrip('/')} (chart {self.name})"

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


def reference_from_release(chart: object, version: object, repo: object) -> ChartReference:
    """The reference of a Release's ``chart`` / ``version`` / ``repositoryOpts.repo`` inputs.

    Raises :class:`UnsupportedChartError` with the reason when they do not pin one chart.
    """
    if not isinstance(chart, str) or not chart.strip():
        raise UnsupportedChartError("the release names no chart")
    if not isinstance(version, str) or not version.strip():
        raise UnsupportedChartError(f"chart {chart} has no pinned version")
    chart, version = chart.strip(), version.strip()
    _check_version(chart, version)
    if chart.startswith("oci://"):
        name = chart.rstrip("/").rsplit("/", 1)[-1]
        return ChartReference(name=name, version=version, source=chart.rstrip("/"))
    if isinstance(repo, str) and repo.strip():
        if "/" in chart:
            raise UnsupportedChartError(f"chart {chart!r} with repositoryOpts.repo must be a bare chart name")
        return ChartReference(name=chart, version=version, source=repo.strip())
    raise UnsupportedChartError(
        f"chart {chart!r} is neither an oci:// reference nor a name with repositoryOpts.repo"
    )


def _check_version(chart: str, version: str) -> None:
    """A version that cannot name a chart folder: a path separator, NUL, ``.``/``..``, or a
    ``<name>-<version>`` longer than :data:`MAX_FOLDER_BYTES`.  Helm versions are SemVer 2
    (helm.sh/docs/topics/charts "The Chart.yaml File"), which never contain these."""
    name = chart.rstrip("/").rsplit("/", 1)[-1]
    shown = version if len(version) <= 40 else f"{version[:37]}..."
    if "/" in version or "\\" in version or "\x00" in version or version in (".", ".."):
        raise UnsupportedChartError(f"chart {name} version {shown!r} is not a chart version (SemVer 2)")
    size = len(f"{name}-{version}".encode())
    if size > MAX_FOLDER_BYTES:
        raise UnsupportedChartError(
            f"chart {name} version {shown!r} is {len(version)} characters long: no chart is published "
            f"under it (an OCI tag is at most 128 characters) and '<name>-<version>' ({size} bytes) "
            f"exceeds the {MAX_FOLDER_BYTES}-byte folder name the chart cache uses"
        )
