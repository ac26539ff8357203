"""Pinned plain manifests (not Helm charts): read ``manifests:`` of ``charts.lock.yaml`` and resolve
each file into the local cache the way :mod:`.resolver` resolves charts.

Why: GKE's GPUDirect how-tos and cluster-toolkit (``modules/compute/gke-node-pool/gpu_direct.tf``
``gpu_direct_settings``) apply Google's NCCL installer DaemonSets and the NRI device injector from
``https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/<commit>/<path>``:
pinned by commit, never copied.  The program declares their objects, the preview validates them,
and the pack reads the networking CRDs, all from the same pinned bytes.

Resolution order per file, as for charts: the cache (``<chart cache>/../manifests/<key>-<commit8>/``),
the mirror (``mirror`` of the entry, relative to ``$GPU_BATCH_CHART_MIRROR`` / ``../shared/vendor``,
with ``strip`` removed from the upstream path), then the upstream URL (skipped when
``$GPU_BATCH_CHARTS_OFFLINE`` is set; bounded by ``$GPU_BATCH_CHART_PULL_TIMEOUT``).  Every failure
is one line naming the file and every place tried (:class:`ManifestUnavailableError`).
"""

from __future__ import annotations

import functools
import os
import tempfile
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from ...primitives.yaml_loader import SAFE_LOADER
from .resolver import (
    DEFAULT_PULL_TIMEOUT_S,
    OFFLINE_ENV,
    PULL_TIMEOUT_ENV,
    REPO_ROOT,
    default_cache,
    default_mirror,
    shown_path,
)

LOCK_FILE: Final = REPO_ROOT / "charts.lock.yaml"
# libyaml's loader when PyYAML has it: the pinned CRD files are megabytes of YAML, which the pure
# Python loader parsed in seconds on every preview and pack start (issue 44); both construct with
# the same SafeConstructor, and tests/charts/test_render_cache.py compares them on every pinned file.
LOADER: Final[Any] = SAFE_LOADER


class ManifestLockError(ValueError):
    """``manifests:`` of ``charts.lock.yaml`` is missing an entry or has one of the wrong shape."""


class ManifestUnavailableError(RuntimeError):
    """No source could provide a pinned file; ``str()`` is the one line to show."""


@dataclass(frozen=True)
class ManifestSet:
    """One ``manifests.<key>`` entry: files of one upstream repository at one commit."""

    key: str
    source: str
    commit: str
    mirror: str
    files: tuple[str, ...]
    strip: str = ""

    def url(self, path: str) -> str:
        """Where upstream publishes ``path`` (the raw URL GKE's docs apply)."""
        return f"{self.source.rstrip('/')}/{self.commit}/{path}"

    @property
    def folder(self) -> str:
        return f"{self.key}-{self.commit[:8]}"


def _entry(key: str, raw: Any) -> ManifestSet:
    where = f"{LOCK_FILE.name}: manifests.{key}"
    if not isinstance(raw, Mapping):
        raise ManifestLockError(f"{where}: got {raw!r}, expected a map with source, commit, mirror, files")
    fields: dict[str, str] = {}
    for name in ("source", "commit", "mirror"):
        value = raw.get(name)
        if not isinstance(value, str) or not value.strip():
            raise ManifestLockError(f"{where}.{name}: got {value!r}, expected a non-empty string")
        fields[name] = value.strip()
    if len(fields["commit"]) != 40 or any(c not in "0123456789abcdef" for c in fields["commit"]):
        raise ManifestLockError(f"{where}.commit: got {fields['commit']!r}, expected a 40-hex commit")
    files = raw.get("files")
    if not isinstance(files, list) or not files or not all(isinstance(f, str) and f for f in files):
        raise ManifestLockError(f"{where}.files: got {files!r}, expected a non-empty list of paths")
    strip = raw.get("strip", "")
    if not isinstance(strip, str):
        raise ManifestLockError(f"{where}.strip: got {strip!r}, expected a path prefix")
    return ManifestSet(key=key, files=tuple(files), strip=strip, **fields)


@functools.cache
def locked_manifests(path: Path = LOCK_FILE) -> dict[str, ManifestSet]:
    """Every ``manifests:`` entry of the lock file, by key (none when the section is absent)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise ManifestLockError(f"{path.name}: cannot read: {' '.join(str(error).split())}") from None
    section = data.get("manifests") if isinstance(data, Mapping) else None
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        raise ManifestLockError(f"{path.name}: manifests: got {section!r}, expected a map of entries")
    return {str(key): _entry(str(key), raw) for key, raw in section.items()}


def manifest_set(key: str) -> ManifestSet:
    """The entry ``key``; a missing one is a :class:`ManifestLockError`."""
    found = locked_manifests()
    if key not in found:
        raise ManifestLockError(
            f"{LOCK_FILE.name}: manifests.{key}: missing (entries: {', '.join(sorted(found))})"
        )
    return found[key]


def _timeout() -> float:
    try:
        return float(os.environ.get(PULL_TIMEOUT_ENV) or DEFAULT_PULL_TIMEOUT_S)
    except ValueError:
        return DEFAULT_PULL_TIMEOUT_S


def _download(url: str, timeout_s: float) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        body: bytes = response.read()
    return body


def _install(target: Path, body: bytes) -> None:
    """Write through a temporary file and rename, so concurrent resolvers never see half a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=f".{target.name}-", dir=target.parent)
    with os.fdopen(handle, "wb") as out:
        out.write(body)
    Path(staging).replace(target)


@functools.cache
def resolve_manifest(key: str, path: str) -> Path:
    """The local copy of pinned file ``path`` of entry ``key`` (cache, mirror or upstream)."""
    entry = manifest_set(key)
    if path not in entry.files:
        raise ManifestLockError(f"{LOCK_FILE.name}: manifests.{key}.files: {path!r} is not pinned")
    target = default_cache().parent / "manifests" / entry.folder / path
    if target.is_file():
        return target
    tried: list[str] = []
    mirror = default_mirror()
    if mirror is not None:
        local = (mirror / entry.mirror / path.removeprefix(entry.strip)).resolve()
        if local.is_file():
            _install(target, local.read_bytes())
            return target
        tried.append(f"mirror {shown_path(local)}: not found")
    if os.environ.get(OFFLINE_ENV):
        tried.append(f"upstream: skipped ({OFFLINE_ENV} is set)")
    else:
        try:
            _install(target, _download(entry.url(path), _timeout()))
            return target
        except OSError as error:
            tried.append(f"{entry.url(path)}: {' '.join(str(error).split())[:160]}")
    raise ManifestUnavailableError(
        f"cannot resolve {key} {path} @ {entry.commit[:8]} (tried {'; '.join(tried)})"
    )


def load_documents(key: str, path: str) -> tuple[dict[str, Any], ...]:
    """The YAML documents of a pinned file (empty documents left out)."""
    text = resolve_manifest(key, path).read_text(encoding="utf-8")
    return tuple(doc for doc in yaml.load_all(text, Loader=LOADER) if isinstance(doc, dict))
