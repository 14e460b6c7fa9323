"""``reload_controller_libraries``' Python side: the modules of the controller classes read again."""
from __future__ import annotations

import importlib
import sys
from typing import Iterable, List

__all__ = ["reload_modules"]


def reload_modules(module_names: Iterable[str]) -> List[str]:
    """Reload each already imported module of ``module_names`` (sorted order); ``"module: error"``
    for each that failed (e.g. a syntax error in the edited file), the others stay reloaded."""
    failures = []
    for module_name in sorted(module_names):
        module = sys.modules.get(module_name)
        if module is None:
            continue
        try:
            importlib.reload(module)
        except Exception as err:  # noqa: BLE001 - any error of the user's module is reported
            failures.append(f"{module_name}: {err!r}")
    return failures
