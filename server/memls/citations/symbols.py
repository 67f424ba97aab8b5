"""Named definitions in code (functions, classes, methods, types), found by tree-sitter.

The grammars come compiled in their PyPI wheels (tree-sitter-python, -javascript,
-typescript, -go, -rust, -java) and are loaded on first use, offline. A symbol's name is
qualified by the definitions around it (`Class.method`, `impl Type.method` as `Type.method`).
Files in other languages have no symbols: their citations are spans.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

import msgspec

# extension -> (grammar module, its language function)
_GRAMMARS: dict[str, tuple[str, str]] = {
    ".py": ("tree_sitter_python", "language"),
    ".pyi": ("tree_sitter_python", "language"),
    ".js": ("tree_sitter_javascript", "language"),
    ".mjs": ("tree_sitter_javascript", "language"),
    ".cjs": ("tree_sitter_javascript", "language"),
    ".jsx": ("tree_sitter_javascript", "language"),
    ".ts": ("tree_sitter_typescript", "language_typescript"),
    ".mts": ("tree_sitter_typescript", "language_typescript"),
    ".cts": ("tree_sitter_typescript", "language_typescript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx"),
    ".go": ("tree_sitter_go", "language"),
    ".rs": ("tree_sitter_rust", "language"),
    ".java": ("tree_sitter_java", "language"),
}

_JS = {
    "function_declaration",
    "generator_function_declaration",
    "class_declaration",
    "method_definition",
    "variable_declarator",
}
_TS = _JS | {
    "abstract_class_declaration",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "internal_module",
    "function_signature",
    "abstract_method_signature",
}
# grammar module -> node types that define a name (their `name` field, `type` for Rust impls)
_DEFINITIONS: dict[str, frozenset[str]] = {
    "tree_sitter_python": frozenset({"function_definition", "class_definition"}),
    "tree_sitter_javascript": frozenset(_JS),
    "tree_sitter_typescript": frozenset(_TS),
    "tree_sitter_go": frozenset({"function_declaration", "method_declaration", "type_spec"}),
    "tree_sitter_rust": frozenset(
        {
            "function_item",
            "function_signature_item",
            "struct_item",
            "enum_item",
            "trait_item",
            "impl_item",
            "mod_item",
            "union_item",
            "type_item",
            "const_item",
            "static_item",
            "macro_definition",
        }
    ),
    "tree_sitter_java": frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "method_declaration",
            "constructor_declaration",
            "annotation_type_declaration",
        }
    ),
}
_JS_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "class", "generator_function"}
)


class Symbol(msgspec.Struct, frozen=True):
    """A definition: its qualified name, what kind of node it is, and its 1-based lines."""

    name: str
    kind: str
    start_line: int
    end_line: int


def supported(path: str) -> bool:
    return _suffix(path) in _GRAMMARS


def _suffix(path: str) -> str:
    dot = path.rfind(".")
    return path[dot:].lower() if dot > path.rfind("/") else ""


@cache
def _parser(module: str, function: str) -> Any:
    import tree_sitter

    grammar = importlib.import_module(module)
    return tree_sitter.Parser(tree_sitter.Language(getattr(grammar, function)()))


def load_all() -> list[str]:
    """Load every grammar (a check that they are installed and load offline); their modules."""
    loaded = []
    for module, function in sorted(set(_GRAMMARS.values())):
        _parser(module, function)
        loaded.append(f"{module}.{function}")
    return loaded


def symbols(path: str, text: str) -> list[Symbol]:
    """The definitions in `text` (the content of `path`), outermost first; [] for a language
    without a grammar."""
    grammar = _GRAMMARS.get(_suffix(path))
    if grammar is None:
        return []
    module, function = grammar
    tree = _parser(module, function).parse(text.encode("utf-8"))
    kinds = _DEFINITIONS[module]
    return list(_walk(tree.root_node, kinds))


def _name_of(node: Any) -> str | None:
    field = "type" if node.type == "impl_item" else "name"
    name = node.child_by_field_name(field)
    if name is None:
        return None
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        if value is None or value.type not in _JS_FUNCTION_VALUES:
            return None
    if node.type == "method_declaration" and node.child_by_field_name("receiver") is not None:
        receiver = _receiver_type(node.child_by_field_name("receiver"))  # Go: (r *T) M
        if receiver:
            return f"{receiver}.{_text(name)}"
    if name.type == "generic_type":  # impl<T> Foo<T>
        inner = name.child_by_field_name("type")
        name = inner if inner is not None else name
    return _text(name)


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def _receiver_type(receivers: Any) -> str | None:
    stack = [receivers]
    while stack:
        node = stack.pop()
        if node.type == "type_identifier":
            return _text(node)
        stack.extend(reversed(node.children))
    return None


def _walk(root: Any, kinds: frozenset[str]) -> Iterator[Symbol]:
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        node, prefix = stack.pop()
        inner = prefix
        if node.type in kinds:
            name = _name_of(node)
            if name:
                inner = f"{prefix}.{name}" if prefix else name
                outer = node
                if node.type == "variable_declarator" and node.parent is not None:
                    outer = node.parent  # `const f = () => …` covers the whole declaration
                yield Symbol(inner, node.type, outer.start_point[0] + 1, outer.end_point[0] + 1)
        stack.extend((child, inner) for child in reversed(node.children))


def find_symbol(found: Sequence[Symbol], name: str) -> Symbol | None:
    """The definition called `name`: an exact qualified match, else the only definition whose
    last part is `name` (a bare `method` for `Class.method`)."""
    for symbol in found:
        if symbol.name == name:
            return symbol
    tail = [s for s in found if s.name.rsplit(".", 1)[-1] == name]
    return tail[0] if len(tail) == 1 else None


def enclosing(found: Sequence[Symbol], start: int, end: int) -> Symbol | None:
    """The innermost definition that contains lines start..end."""
    best: Symbol | None = None
    for symbol in found:
        if symbol.start_line <= start and end <= symbol.end_line:
            if (
                best is None
                or symbol.end_line - symbol.start_line <= best.end_line - best.start_line
            ):
                best = symbol
    return best
