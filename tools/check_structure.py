#!/usr/bin/env python3
"""The package's shape, checked statically (``make lint``): every rule names the file and line.

* every ``src/`` Python file has at most ``MAX_LINES`` lines (a longer one holds more than one idea);
* no module of the driver's code path imports the simulator: the simulator is a peer on the bus,
  composed by the node, ``hw_check --sim``, the tests and :mod:`rospy_control.composition` only;
* imports go down the layers: a package never imports one from a layer above it (``LAYERS``);
* no two modules of the package import each other, directly or through others, at module level;
* the simulator builds its devices from configuration records and codecs: of ``devices`` it imports
  the protocols' ``codec`` modules only, of ``middleware`` only ``configuration`` (the readers);
* XML is read by two modules only: the hardware XML by ``hardware_config.reader``, the URDF by
  ``urdf`` (``XML_READERS``); no other module imports an XML library.

Usage: ``check_structure.py [SRC_DIR]`` (default: this repository's ``src``); exit status 1 on any
finding.  Imports inside functions count for the simulator and layer rules (they run, too), not for
cycles (they are how a cycle is broken on purpose).
"""
from __future__ import annotations

import ast
import os
import sys
from typing import Dict, List, Optional, Set, Tuple

MAX_LINES = 600
PACKAGE = "rospy_control"
SIMULATOR = "rospy_control.simulator"
#: the driver's code path: none of these may import the simulator
DRIVER_PATH = ("middleware", "bus", "devices", "hardware_config", "robot_hw", "hardware_interface",
               "control_loop", "controllers", "controller_manager", "controller_interface", "downlink",
               "dynamics", "trajectory", "transmission_interface", "joint_limits", "realtime", "board")
#: the modules that may import an XML library, and the libraries
XML_READERS = ("rospy_control.hardware_config.reader", "rospy_control.urdf")
XML_LIBRARIES = ("lxml", "xml", "defusedxml")
#: lower layers first; a package may import its own layer and the ones below, never one above
LAYERS: Tuple[Tuple[str, ...], ...] = (
    ("exceptions", "log", "angles", "plugins", "realtime"),
    ("hardware_config", "urdf", "board"),
    ("bus", "devices"),
    ("middleware", "hardware_interface", "joint_limits", "transmission_interface", "trajectory"),
    ("dynamics", "controller_interface", "downlink"),
    ("simulator",),
    ("composition", "robot_hw", "controller_manager", "controllers"),
    ("control_loop", "examples", "testing"),
    ("adapter",),
)


def _layer_of(package: str) -> Optional[int]:
    for i, names in enumerate(LAYERS):
        if package in names:
            return i
    return None


def _module_name(src: str, path: str) -> str:
    rel = os.path.relpath(path, src)[:-3].replace(os.sep, ".")
    return rel[:-9] if rel.endswith(".__init__") else rel


def _imports(tree: ast.AST, module: str, is_package: bool) -> List[Tuple[str, int, bool]]:
    """``(imported module, line, at module level)`` of every import of the package's own modules."""
    out: List[Tuple[str, int, bool]] = []
    top = set(id(n) for n in getattr(tree, "body", ()))
    for node in ast.walk(tree):
        level = id(node) in top
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno, level) for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.split(".")[0] != PACKAGE:
                continue
            out.append((name, node.lineno, level))
            for alias in node.names:  # "from pkg import module"
                out.append((f"{name}.{alias.name}", node.lineno, level))
    return out


def _foreign_imports(tree: ast.AST) -> List[Tuple[int, str]]:
    """``(line, module)`` of every absolute import, at any level."""
    out: List[Tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append((node.lineno, node.module))
    return out


def check(src: str) -> List[str]:
    findings: List[str] = []
    graph: Dict[str, Set[str]] = {}
    where: Dict[Tuple[str, str], str] = {}
    files: Dict[str, str] = {}
    for root, _dirs, names in os.walk(os.path.join(src, PACKAGE)):
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                files[_module_name(src, path)] = path
    for module, path in sorted(files.items()):
        rel = os.path.relpath(path, os.path.dirname(src))
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_LINES:
            findings.append(f"{rel}: {lines} lines, more than {MAX_LINES}: split it by concept")
        tree = ast.parse(text, filename=path)
        parts = module.split(".")
        package = parts[1] if len(parts) > 1 else ""
        mine = _layer_of(package)
        if module not in XML_READERS:
            for line, name in _foreign_imports(tree):
                if name.split(".")[0] in XML_LIBRARIES:
                    findings.append(f"{rel}:{line}: imports the XML library {name}; read XML through "
                                    f"{' or '.join(XML_READERS)}")
        for imported, line, level in _imports(tree, module, path.endswith("__init__.py")):
            target = imported
            while target not in files and "." in target:
                target = target.rsplit(".", 1)[0]
            if target not in files:
                continue
            other = target.split(".")[1] if "." in target else ""
            if package in DRIVER_PATH and (target == SIMULATOR or target.startswith(SIMULATOR + ".")):
                findings.append(f"{rel}:{line}: the driver's code path imports the simulator ({imported}); "
                                "compose the simulator as a peer outside it")
            theirs = _layer_of(other)
            if mine is not None and theirs is not None and theirs > mine:
                findings.append(f"{rel}:{line}: {PACKAGE}.{package} (layer {mine}) imports {target} "
                                f"(layer {theirs}, above it)")
            if level and target != module:
                graph.setdefault(module, set()).add(target)
                where.setdefault((module, target), f"{rel}:{line}")
        if package == "simulator":
            for line, target in _named_imports(tree, module, path.endswith("__init__.py"), files):
                if not _simulator_may_import(target):
                    findings.append(f"{rel}:{line}: the simulator imports {target}; it builds its devices "
                                    "from the configuration records (middleware.configuration) and the "
                                    "protocols' codecs (devices.<protocol>.codec), never from the driver's "
                                    "devices")
    findings.extend(_cycles(graph, where))
    return findings


def _named_imports(tree: ast.AST, module: str, is_package: bool, files: Dict[str, str]) -> List[Tuple[int, str]]:
    """``(line, module)`` of every import, a ``from package import module`` naming the module itself."""
    out: List[Tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            name = node.module or ""
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                name = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{name}.{alias.name}"
                out.append((node.lineno, full if full in files else name))
    return out


def _simulator_may_import(target: str) -> bool:
    """Of the devices and the middleware, the simulator imports the codecs and the readers only."""
    if target == "rospy_control.devices" or target.startswith("rospy_control.devices."):
        return target.endswith(".codec")
    if target == "rospy_control.middleware" or target.startswith("rospy_control.middleware."):
        return target == "rospy_control.middleware.configuration"
    return True


def _cycles(graph: Dict[str, Set[str]], where: Dict[Tuple[str, str], str]) -> List[str]:
    """One finding per strongly connected group of modules (Tarjan), naming each import of it."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[str] = []
    counter = [0]
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            # a package's __init__ importing its own modules is how a package exposes them: not a cycle
            if v == w.rsplit(".", 1)[0] or w == v.rsplit(".", 1)[0]:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                members = set(group)
                edges = sorted(f"{where[(a, b)]} ({a} -> {b})" for a in group for b in graph.get(a, ())
                               if b in members and (a, b) in where)
                out.append("import cycle between " + ", ".join(sorted(group)) + ": " + "; ".join(edges))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv: List[str]) -> int:
    src = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    findings = check(os.path.abspath(src))
    for finding in dict.fromkeys(findings):  # one line per finding, in order
        print(finding)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
