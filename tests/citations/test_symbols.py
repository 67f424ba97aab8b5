"""Symbols come from the tree-sitter grammars that ship in their wheels, loaded offline."""

from __future__ import annotations

import pytest

from memls.citations import enclosing, find_symbol, symbols
from memls.citations.symbols import load_all


def test_every_grammar_loads() -> None:
    assert len(load_all()) == 7


@pytest.mark.parametrize(
    "path, text, expected",
    [
        ("a.py", "class A:\n    def f(self):\n        pass\n", {"A", "A.f"}),
        (
            "a.js",
            "class K { m() {} }\nfunction g() {}\nconst h = () => 1;\nconst n = 2;\n",
            {"K", "K.m", "g", "h"},
        ),
        (
            "a.ts",
            "interface I { a: string }\ntype T = number;\nexport class C { p(): void {} }\n",
            {"I", "T", "C", "C.p"},
        ),
        ("a.tsx", "export function App() { return <div/>; }\n", {"App"}),
        (
            "a.go",
            "package p\ntype R struct{}\nfunc (r *R) M() {}\nfunc F() {}\n",
            {"R", "R.M", "F"},
        ),
        (
            "a.rs",
            "struct S;\nimpl S { fn new() -> S { S } }\nfn main() {}\n",
            {"S", "S.new", "main"},
        ),
        ("A.java", "class A { A() {} void m() {} }\n", {"A", "A.A", "A.m"}),
        ("notes.md", "# A\n", set()),
    ],
)
def test_definitions_per_language(path: str, text: str, expected: set[str]) -> None:
    assert {s.name for s in symbols(path, text)} == expected


def test_lookup_by_qualified_or_unique_short_name() -> None:
    found = symbols("a.py", "class A:\n    def f(self):\n        pass\n\n\ndef g():\n    pass\n")
    assert find_symbol(found, "A.f") is not None
    assert find_symbol(found, "f") == find_symbol(found, "A.f")
    assert find_symbol(found, "h") is None
    inner = enclosing(found, 3, 3)
    assert inner is not None and inner.name == "A.f"
