"""The core never imports the UI, has no import cycles, and importing any core module has no side
effects (no files, no sockets)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORE = sorted((REPO / "assistant").rglob("*.py"))


def _type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module -> modules of the same package it imports, at module level or inside functions (a lazy
    import is still a dependency). Names are dotted below the package (``answer.answerer``, ``cli``);
    a package's ``__init__`` is the package's own name. Imports under ``if TYPE_CHECKING:`` are
    annotations only: not edges."""
    package = package_dir.name

    def name_of(path: Path) -> str:
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts) or "__init__"

    modules = {name_of(p) for p in package_dir.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        edges: set[str] = set()
        todo: list[ast.AST] = [ast.parse(path.read_text())]
        while todo:
            node = todo.pop()
            if _type_checking_block(node):
                continue
            todo.extend(ast.iter_child_nodes(node))
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] != package:
                    continue
                dotted = ".".join(parts[1:])
                # the longest module name the import names (``pkg.a.thing`` -> ``a``)
                while dotted and dotted not in modules:
                    dotted = dotted.rpartition(".")[0]
                if dotted:
                    edges.add(dotted)
        graph[name_of(path)] = edges - {name_of(path)}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as ``[a, b, ..., a]``, or [] when the graph has none (depth-first search)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_core_has_no_import_cycles_not_even_type_only(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 21: no cycle even counting imports under ``if TYPE_CHECKING:`` (an annotation that needs a
    higher module is a sign the type lives in the wrong place)."""
    import sys

    monkeypatch.setattr(sys.modules[__name__], "_type_checking_block", lambda node: False)
    graph = import_graph(REPO / "assistant")
    assert find_cycle(graph) == [], " -> ".join(find_cycle(graph))


def test_core_has_no_import_cycles() -> None:
    graph = import_graph(REPO / "assistant")
    assert graph["answer.answerer"] >= {"answer.strategies", "answer.builder"}, "the graph reader missed imports"
    assert find_cycle(graph) == [], " -> ".join(find_cycle(graph))


# The pipeline's stages, lowest first: a module may import its own stage and the stages below it, never
# one above (docs/design.md, "The layout"). Top-level modules are stages of their own.
LAYERS: list[set[str]] = [
    {"errors", "tuning", "logs", "offline", "models"},
    {"config", "setting_groups", "lang"},
    {"types", "llm"},
    {"index"},
    {"ingest"},
    {"understand"},
    {"retrieve"},
    {"verify"},
    {"answer"},
    {"conversation"},
    {"service"},
    {"eval"},
    {"api"},
    {"cli"},
]


def stage_violations(graph: dict[str, set[str]], layers: list[set[str]]) -> list[str]:
    """Imports from a lower stage to a higher one, as ``"a.b -> c.d"`` lines ([] when the order holds)."""
    rank = {stage: i for i, stages in enumerate(layers) for stage in stages}
    bad = []
    for module, imports in graph.items():
        stage = module.split(".")[0]
        if stage not in rank:
            continue
        for imported in imports:
            if rank.get(imported.split(".")[0], -1) > rank[stage]:
                bad.append(f"{module} -> {imported}")
    return sorted(bad)


def test_every_stage_is_in_the_layer_order() -> None:
    stages = {m.split(".")[0] for m in import_graph(REPO / "assistant")} - {"__init__", "__main__"}
    assert stages == set().union(*LAYERS)


def test_stages_import_only_their_own_and_lower_stages() -> None:
    assert stage_violations(import_graph(REPO / "assistant"), LAYERS) == []


def test_the_stage_check_fails_on_an_upward_import() -> None:
    graph = {"index.store": {"answer.answerer"}, "answer.answerer": {"index.store"}}
    assert stage_violations(graph, LAYERS) == ["index.store -> answer.answerer"]


def test_the_cycle_check_fails_on_a_deliberate_cycle(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import thing\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import c\n"
                              "def thing():\n    from pkg import c  # lazy, still a dependency\n    return c\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "sub").mkdir()
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "d.py").write_text("from pkg.a import thing\n")
    graph = import_graph(pkg)
    assert graph["sub.d"] == {"a"}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n")
    assert find_cycle(import_graph(pkg)) == []  # annotation-only imports are not a cycle


def test_core_does_not_import_ui_or_gradio() -> None:
    offenders = []
    for path in CORE:
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] in ("ui", "gradio")]
    assert offenders == []  # no exception: the UI owns its launch (ui/cli.py)


def test_ui_settings_are_not_core_settings() -> None:
    """Host, port and login belong to the UI package (ui/settings.py), not to the core Settings."""
    from assistant.config import Settings
    from ui.settings import UISettings

    assert not [f for f in Settings.model_fields if f.startswith("ui_")]
    assert set(UISettings.model_fields) == {"host", "port", "auth"}


def test_importing_every_core_module_has_no_side_effects(tmp_path: Path) -> None:
    modules = [".".join(("assistant", *p.relative_to(REPO / "assistant").with_suffix("").parts))
               for p in CORE if p.stem not in ("__init__", "__main__")]
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise SystemExit('socket used at import time')\n"
        "socket.socket.connect = refuse\nsocket.create_connection = refuse\nsocket.getaddrinfo = refuse\n"
        f"import importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
        "import os\nassert not os.listdir('.'), os.listdir('.')\nprint('ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"
    assert list(tmp_path.iterdir()) == []
