"""Resolve a pinned chart into a local cache: cache hit, offline mirror, or upstream pull.

Why a cache of unpacked charts (``.cache/charts/<name>-<version>/``, git-ignored): rendering needs
the chart's files, every preview and every pack run needs the same few charts, and nothing
upstream may be committed to the project.  Resolution order:

1. the cache, when ``<cache>/<name>-<version>/Chart.yaml`` exists;
2. a local mirror directory laid out like the unpacked ``.tgz`` files, one folder per
   ``<name>-<version>`` (``$GPU_BATCH_CHART_MIRROR``; default ``../shared/vendor`` beside the
   repository when that exists -- the workspace's offline mirror, provenance in its SOURCE.md);
3. the upstream location, pulled with the Helm engine (``helm pull [--repo URL] --untar``);
   skipped when ``$GPU_BATCH_CHARTS_OFFLINE`` is set.  The pull runs in a child process with a
   deadline (``$GPU_BATCH_CHART_PULL_TIMEOUT`` seconds, default 120): a native call cannot be
   interrupted, and a registry that never answers (or a wedged Helm client) must cost a finding,
   never a hung preview or pack.  A failed resolution is remembered for the life of the process,
   so a pack judging many calls does not wait for the same unreachable registry again.

Whatever the source, the chart is loaded with the Helm engine and its ``Chart.yaml`` name and
version must be the ones pinned, so a wrong folder never passes for the pinned chart.  A copy
lands in a temporary folder first and is renamed into place, so two processes (the preview and
the pack it starts) may resolve the same chart at once.  When every source fails, one line says
which chart, which version and every place tried (:class:`ChartUnavailableError`).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

import helm_python

from .reference import ChartReference

CACHE_ENV: Final = "GPU_BATCH_CHART_CACHE"
MIRROR_ENV: Final = "GPU_BATCH_CHART_MIRROR"
OFFLINE_ENV: Final = "GPU_BATCH_CHARTS_OFFLINE"
PULL_TIMEOUT_ENV: Final = "GPU_BATCH_CHART_PULL_TIMEOUT"
DEFAULT_PULL_TIMEOUT_S: Final = 120.0

# charts/ -> facts/ -> gpu_batch_policy/ -> policies/ -> the repository root.
REPO_ROOT: Final = Path(__file__).resolve().parents[4]


class ChartUnavailableError(RuntimeError):
    """No source could provide the chart; ``str()`` is the one line to show."""

    def __init__(self, reference: ChartReference, tried: list[str]) -> None:
        self.reference = reference
        self.tried = tried
        super().__init__(
            f"cannot resolve chart {reference.name} {reference.version} (tried {'; '.join(tried)})"
        )


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def shown_path(path: Path) -> str:
    """A path relative to the checkout (messages only): ``../shared/...`` for the offline mirror.

    Relative to the checkout rather than the working directory, so the pack's processes (started
    in other directories) and the preview word the same file the same way, and a message never
    names this machine's directories."""
    try:
        return os.path.relpath(path, REPO_ROOT)
    except ValueError:
        return str(path)


class ChartResolver:
    """Resolves :class:`ChartReference` objects into unpacked chart folders (thread-safe)."""

    def __init__(
        self,
        cache_dir: Path,
        mirror_dir: Path | None,
        *,
        offline: bool = False,
        pull_timeout_s: float = DEFAULT_PULL_TIMEOUT_S,
    ) -> None:
        self.cache_dir = cache_dir
        self.mirror_dir = mirror_dir
        self.offline = offline
        self.pull_timeout_s = pull_timeout_s
        self._resolved: dict[ChartReference, Path | ChartUnavailableError] = {}
        self._lock = threading.Lock()

    def resolve(self, reference: ChartReference) -> Path:
        """The chart folder for ``reference``; raises :class:`ChartUnavailableError`."""
        with self._lock:
            found = self._resolved.get(reference)
            if found is None:
                try:
                    found = self._resolve(reference)
                except ChartUnavailableError as error:
                    found = error
                except OSError as error:  # the cache or mirror path itself (length, permissions)
                    found = ChartUnavailableError(reference, [f"chart cache: {_one_line(str(error))}"])
                self._resolved[reference] = found
            if isinstance(found, ChartUnavailableError):
                raise found
            return found

    def _resolve(self, reference: ChartReference) -> Path:
        target = self.cache_dir / reference.folder
        if _is_chart(target, reference):
            return target
        tried: list[str] = []
        if self.mirror_dir is not None:
            mirrored = self.mirror_dir / reference.folder
            if _is_chart(mirrored, reference):
                return self._install(target, lambda tmp: _copy(mirrored, tmp))
            bundled = _bundled(self.mirror_dir, reference)
            if bundled is not None:
                return self._install(target, lambda tmp: _copy(bundled, tmp))
            tried.append(f"mirror {shown_path(mirrored)}: not found")
        else:
            tried.append(f"mirror: none (set {MIRROR_ENV})")
        if self.offline:
            tried.insert(0, f"{reference.location}: not pulled, {OFFLINE_ENV} is set")
        else:
            try:
                return self._install(target, lambda tmp: _pull(reference, tmp, self.pull_timeout_s))
            except (OSError, ValueError) as error:
                tried.insert(0, f"{reference.location}: {_one_line(str(error))}")
        raise ChartUnavailableError(reference, tried)

    def _install(self, target: Path, fill: Callable[[Path], Path]) -> Path:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=self.cache_dir))
        try:
            chart_dir = fill(staging)
            try:
                chart_dir.rename(target)
            except OSError:
                if not (target / "Chart.yaml").is_file():  # not merely lost a race
                    raise
            return target
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _is_chart(folder: Path, reference: ChartReference) -> bool:
    """Whether ``folder`` holds exactly the pinned chart (name and version from Chart.yaml)."""
    if not (folder / "Chart.yaml").is_file():
        return False
    try:
        with helm_python.Chart.load(folder) as chart:
            return chart.name == reference.name and chart.version == reference.version
    except helm_python.HelmError:
        return False


def _bundled(mirror: Path, reference: ChartReference) -> Path | None:
    """The pinned chart as a subchart another mirrored chart bundles (``<chart>/charts/<name>``):
    Helm packages a dependency unchanged, so the same name and version is the same chart
    (skypilot 0.13.0 bundles ingress-nginx 4.11.8, its Chart.lock)."""
    for candidate in sorted(mirror.glob(f"*/charts/{reference.name}")):
        if _is_chart(candidate, reference):
            return candidate
    return None


def _copy(source: Path, staging: Path) -> Path:
    """Copy the mirror's folder; files get the user's default modes (a read-only mirror must
    not make the cache undeletable)."""
    destination = staging / "chart"
    shutil.copytree(source, destination, symlinks=False, copy_function=shutil.copyfile)
    for folder in (destination, *destination.rglob("*")):
        if folder.is_dir():
            folder.chmod(0o755)
    return destination


# The child process that pulls: ``helm pull`` with the Helm engine, errors on stderr, one line.
_PULL_SCRIPT: Final = """
import json, sys
import helm_python
args = json.loads(sys.argv[1])
try:
    helm_python.pull(args.pop("ref"), **args)
except helm_python.HelmError as error:
    sys.stderr.write(" ".join(str(error).split()))
    sys.exit(3)
"""


def _pull(reference: ChartReference, staging: Path, timeout_s: float) -> Path:
    """``helm pull`` into ``staging`` and untar, in a child process killed at the deadline; the
    chart lands in ``staging/untar/<name>``.  Raises ValueError with the reason."""
    untar = staging / "untar"
    args: dict[str, object] = {
        "ref": reference.source if reference.oci else reference.name,
        "version": reference.version,
        "destination": str(staging),
        "untar": True,
        "untar_dir": str(untar),
    }
    if not reference.oci:
        args["repo_url"] = reference.source
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PULL_SCRIPT, json.dumps(args)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ValueError(f"no answer within {timeout_s:g} s (set {PULL_TIMEOUT_ENV})") from None
    if done.returncode != 0:
        raise ValueError(done.stderr.strip() or f"helm pull exited {done.returncode}")
    chart_dir = untar / reference.name
    if not _is_chart(chart_dir, reference):
        raise ValueError(f"the pulled archive is not chart {reference}")
    return chart_dir


def default_mirror() -> Path | None:
    """``$GPU_BATCH_CHART_MIRROR``, else ``../shared/vendor`` beside the repository if present."""
    configured = os.environ.get(MIRROR_ENV)
    if configured:
        return Path(configured)
    workspace = REPO_ROOT.parent / "shared" / "vendor"
    return workspace if workspace.is_dir() else None


def default_cache() -> Path:
    """``$GPU_BATCH_CHART_CACHE``, else ``.cache/charts`` in the repository (git-ignored)."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else REPO_ROOT / ".cache" / "charts"


@functools.cache
def default_resolver() -> ChartResolver:
    """One resolver per process, configured from the environment on first use."""
    try:
        timeout_s = float(os.environ.get(PULL_TIMEOUT_ENV) or DEFAULT_PULL_TIMEOUT_S)
    except ValueError:
        timeout_s = DEFAULT_PULL_TIMEOUT_S
    return ChartResolver(
        default_cache(), default_mirror(), offline=bool(os.environ.get(OFFLINE_ENV)), pull_timeout_s=timeout_s
    )
