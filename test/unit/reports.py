"""Figures a test module collects while it runs (fuzzing counts), written as JSON reports under
``.ws/fuzz/`` by the ``pytest_sessionfinish`` hook of ``test/unit/conftest.py`` -- not by a test: a
report cannot fail, so it is not one, and it is written whatever order or subset of tests ran.

A module registers a callable returning the report's data; an empty result writes nothing (the
module's tests did not run)::

    from reports import register
    register("broken_config", lambda: {k: dict(v) for k, v in sorted(FIGURES.items())})
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List

__all__ = ["register", "write_all", "REPORT_DIR"]

#: Where the reports go, relative to the repository root.
REPORT_DIR = os.path.join(".ws", "fuzz")

_REPORTS: Dict[str, Callable[[], Any]] = {}


def register(name: str, build: Callable[[], Any]) -> None:
    """Write ``build()`` as ``<REPORT_DIR>/<name>.json`` at the end of the session."""
    _REPORTS[name] = build


def write_all(root: str) -> List[str]:
    """Write every registered report with data under ``root``; the paths written."""
    written = []
    for name, build in sorted(_REPORTS.items()):
        data = build()
        if not data or (isinstance(data, dict) and not any(data.values())):
            continue
        folder = os.path.join(root, REPORT_DIR)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, name + ".json")
        with open(path, "w") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        written.append(path)
    return written
