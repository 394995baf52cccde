"""The project's import graph: no cycle between files, and no import up the layers.

Every import is counted, those inside functions too (a lazy import still ties two files
together). An edge goes from a file to the module it names (``from a.b import c`` reaches the
module ``a.b.c`` when that is a file, else ``a.b``); a package's ``__init__`` is not counted as
importing its parent, so a package may re-export its own modules.

Layers, lowest first: ``numbers``/``stages``/``blocks``/``calibration`` and the engine, then
``display``, then everything else. A lower layer never imports a higher one.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
PACKAGE = "attention_explorer"

#: Modules (or packages) that must not import anything above them.
LOWER = {
    "engine": ("engine", "numbers", "stages", "blocks", "_version"),
    "display": ("display", "engine", "numbers", "stages", "blocks", "_version"),
    "stages": ("numbers", "stages", "_version"),
    "numbers": ("numbers",),
}


def _module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    files = {}
    for path in (APP / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(APP).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _imports(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """The project's modules that the file ``path`` (module ``name``) imports anywhere."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            targets = [t for t in targets[:-1] if t in known] or [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    known = _module_files()
    return {name: _imports(path, name, known) for name, path in known.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def _layer(name: str) -> str:
    return name.split(".")[1] if "." in name else ""


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_the_projects_files():
    assert _cycles(_graph()) == []


def test_no_import_runs_up_from_a_lower_layer():
    upward = []
    for name, targets in _graph().items():
        allowed = LOWER.get(_layer(name))
        if allowed is None:
            continue
        upward += [f"{name} -> {t}" for t in sorted(targets) if _layer(t) not in allowed]
    assert upward == []


def test_packaging_scripts_do_not_import_each_other_in_a_cycle():
    scripts = {p.stem: p for p in (ROOT / "packaging").glob("*.py")}
    graph = {}
    for stem, path in scripts.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        graph[stem] = {n for n in names if n in scripts and n != stem}
    assert _cycles(graph) == []
