"""docs/writing_a_robot_hw.md: every python block compiles, and the complete ones run as written.

A block is complete when it has no placeholder (``...``) and no ``self.`` (a method's body); the
complete blocks run in order in one namespace, as a reader would type them one after the other.
"""
from __future__ import annotations

import os
import re

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TUTORIAL = os.path.join(ROOT, "docs", "writing_a_robot_hw.md")


def python_blocks():
    with open(TUTORIAL) as f:
        text = f.read()
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def complete(block: str) -> bool:
    return "..." not in block and "self." not in block


def test_every_python_block_compiles():
    blocks = python_blocks()
    assert blocks
    for k, block in enumerate(blocks):
        compile(block, f"{TUTORIAL} python block {k}", "exec")


def test_the_complete_blocks_run_in_order():
    runnable = [b for b in python_blocks() if complete(b)]
    assert len(runnable) >= 3, "the URDF, limits and RealtimeBuffer examples"
    namespace: dict = {}
    for k, block in enumerate(runnable):
        try:
            exec(compile(block, f"{TUTORIAL} complete block {k}", "exec"), namespace)
        except Exception as err:  # noqa: BLE001 - name the block that failed
            pytest.fail(f"complete block {k} of {TUTORIAL} failed: {type(err).__name__}: {err}\n{block}")
