"""The one helper for upstream files (tests/upstream.py): the store first, pins that agree with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import upstream


def test_default_branch_pins_are_the_stored_commits() -> None:
    rows = upstream.stored_sources()
    if not rows:
        pytest.skip(f"no {upstream.STORE}/SOURCE.tsv here")
    stored = {r["repo"]: r["commit"] for r in rows if r["ref"].startswith("(default branch")}
    assert stored == upstream.DEFAULT_BRANCH_PINS


def test_every_stored_file_is_where_the_helper_looks() -> None:
    rows = upstream.stored_sources()
    if not rows:
        pytest.skip(f"no {upstream.STORE}/SOURCE.tsv here")
    for row in rows:
        ref = row["commit"] if row["ref"].startswith("(default branch") else row["ref"]
        assert upstream.upstream_file(row["repo"], ref, row["path"]), row["stored_as"]


def test_the_store_is_read_before_any_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = tmp_path / "owner+repo" / "v1.0.0" / "dir" / "file.txt"
    stored.parent.mkdir(parents=True)
    stored.write_text("from the store")
    monkeypatch.setattr(upstream, "STORE", tmp_path)
    monkeypatch.setattr(upstream, "MIRRORS", tmp_path / "no-mirrors")
    assert upstream.upstream_file("owner/repo", "v1.0.0", "dir/file.txt") == "from the store"
    assert upstream.upstream_listing("owner/repo", "v1.0.0", "dir") == ["file.txt"]


def test_neither_store_nor_mirror_skips_naming_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upstream, "STORE", tmp_path)
    monkeypatch.setattr(upstream, "MIRRORS", tmp_path / "no-mirrors")
    with pytest.raises(
        pytest.skip.Exception, match=r"owner/repo dir/missing.txt@v1.0.0: not in .* and no git mirror"
    ):
        upstream.upstream_file("owner/repo", "v1.0.0", "dir/missing.txt", env="GPU_BATCH_NO_SUCH_GIT")
