"""The project directory: where the stack files, ``charts.lock.yaml`` and ``policies/`` live, and
where ``pulumi up`` runs the program (so where a Release's relative paths, such as its
``postrender``, are resolved)."""

from __future__ import annotations

from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
