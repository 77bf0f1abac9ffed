"""The import graph of the project's own modules, read from their sources with `ast`: the
product packages never import `evaluation`, and no two modules import each other, directly or
through others (imports inside functions count; those under `if TYPE_CHECKING:` do not)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parents[1]
PRODUCT = ("schemagraph", "providers", "store", "indexer", "retriever", "generator")
PACKAGES = (*PRODUCT, "schemarag", "evaluation")
#: groups of modules allowed to import each other (none: add one only with a reason)
KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    return {
        module_name(path): path for package in PACKAGES for path in (REPO / package).rglob("*.py")
    }


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(tree: ast.AST, *, type_checking: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of `tree`, anywhere in it; those under `if TYPE_CHECKING:` only
    when `type_checking`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
            yield from imports(ast.Module(body=node.orelse, type_ignores=[]), type_checking=False)
        else:
            yield from imports(node, type_checking=type_checking)


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imported_names(module: str, path: Path, *, type_checking: bool) -> Iterator[tuple[str, str]]:
    """(module, name) for each name `module` imports (`name` empty for `import module`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in imports(tree, type_checking=type_checking):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ""
        else:
            source = _absolute(module, node, path.name == "__init__.py")
            for alias in node.names:
                yield source, alias.name


def import_graph() -> nx.DiGraph:
    """Module -> the project modules it imports. A name imported from a package resolves to the
    module that defines it (the package's lazy table), or to the submodule of that name."""
    modules = project_modules()
    exported: dict[str, dict[str, str]] = {}
    for name, path in modules.items():
        if path.name == "__init__.py":
            exported[name] = {
                alias: source
                for source, alias in imported_names(name, path, type_checking=True)
                if source in modules and alias
            }
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for source, alias in imported_names(name, path, type_checking=False):
            if f"{source}.{alias}" in modules:
                target = f"{source}.{alias}"
            elif alias in exported.get(source, {}):
                target = exported[source][alias]
            elif source in modules:
                target = source
            else:
                continue
            if target != name:
                graph.add_edge(name, target)
    return graph


def test_no_product_module_imports_evaluation() -> None:
    offenders = sorted(
        f"{name} imports {source}"
        for name, path in project_modules().items()
        if name.split(".")[0] in PRODUCT
        for source, alias in imported_names(name, path, type_checking=True)
        if "evaluation" in (source.split(".")[0], f"{source}.{alias}".strip(".").split(".")[0])
    )
    assert offenders == []


def test_no_two_modules_import_each_other() -> None:
    cycles = {frozenset(group) for group in nx.strongly_connected_components(import_graph())}
    cycles = {group for group in cycles if len(group) > 1}
    assert sorted(sorted(group) for group in cycles - KNOWN_CYCLES) == []
    assert sorted(sorted(group) for group in KNOWN_CYCLES - cycles) == [], (
        "no longer a cycle: remove it from KNOWN_CYCLES"
    )


def test_the_graph_sees_imports_of_every_kind() -> None:
    graph = import_graph()
    # `from evaluation.datasets import ...` at the top of a module
    assert graph.has_edge("evaluation.recall", "evaluation.datasets")
    # a name from a package's lazy table resolves to its module
    assert graph.has_edge("evaluation.datasets", "schemagraph.sources")
    # an import inside a function (`cmd_voting` reads the data set only when it runs)
    assert graph.has_edge("schemarag.cli.bench_generation", "evaluation.datasets")
    # a cycle is found
    graph.add_edge("evaluation.datasets", "evaluation.recall")
    assert any(len(group) > 1 for group in nx.strongly_connected_components(graph))


def test_every_manifest_reader_gets_the_typed_manifest() -> None:
    # `StoreLocation.manifest` is the raw JSON; everyone else reads `read_manifest`'s Manifest
    raw_readers = set()
    for name, path in project_modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "manifest"
            ):
                raw_readers.add(name)
    for path in (REPO / "benchmarks").glob("*.py"):
        if ".manifest(" in path.read_text(encoding="utf-8"):
            raw_readers.add(f"benchmarks.{path.stem}")
    assert raw_readers == {"store.manifest"}


def test_the_store_is_read_without_the_indexer() -> None:
    """The retriever reads a build through `store` alone, and `store` imports only `schemagraph`
    and `providers` of the project: neither reaches into the indexer that writes builds."""
    graph = import_graph()
    offenders = sorted(
        f"{name} imports {target}"
        for name, target in graph.edges
        if (name.startswith(("retriever", "store")) and target.startswith("indexer"))
        or (
            name.startswith("store")
            and target.split(".")[0] not in ("store", "schemagraph", "providers")
        )
    )
    assert offenders == []
    assert graph.has_edge("retriever.knowledge", "store.snapshot")
    assert graph.has_edge("indexer.building.load", "store.snapshot")
