"""Path scopes: read from a note's folder and front matter as its agent reads them, whether a
scope covers a file, and whether two scopes can meet (the question asked before two statements
are compared)."""

from __future__ import annotations

import pytest

from memls.notes import DEFAULT
from memls.notes.imports import imports, only_imports
from memls.notes.parse import parse
from memls.notes.scope import can_meet, covers, expand, front_matter, scope_of


def scoped(path: str, text: str = "- A rule.\n"):
    return scope_of(DEFAULT.match(path), text)


@pytest.mark.parametrize(
    ("path", "text", "globs"),
    [
        pytest.param("AGENTS.md", "- x\n", (), id="root AGENTS.md: everywhere"),
        pytest.param("services/api/AGENTS.md", "- x\n", ("services/api/**",), id="nested"),
        pytest.param("pkg/.claude/CLAUDE.md", "- x\n", ("pkg/**",), id="nested .claude"),
        pytest.param(".github/copilot-instructions.md", "- x\n", (), id="copilot root"),
        pytest.param(
            ".claude/rules/api.md",
            '---\npaths:\n  - "src/api/**/*.ts"\n  - "tests/**/*.test.ts"\n---\n- x\n',
            ("src/api/**/*.ts", "tests/**/*.test.ts"),
            id="Claude paths list",
        ),
        pytest.param(
            ".claude/rules/ts.md",
            "---\npaths: src/**/*.{ts,tsx}\n---\n- x\n",
            ("src/**/*.ts", "src/**/*.tsx"),
            id="Claude paths with braces, unquoted",
        ),
        pytest.param(".claude/rules/all.md", "- x\n", (), id="Claude rule without paths"),
        pytest.param(
            ".github/instructions/py.instructions.md",
            '---\napplyTo: "**/*.py,scripts/**"\n---\n- x\n',
            ("**/*.py", "scripts/**"),
            id="Copilot applyTo, comma-separated",
        ),
        pytest.param(
            ".github/instructions/all.instructions.md",
            '---\napplyTo: "**"\n---\n- x\n',
            (),
            id="Copilot applyTo everything",
        ),
        pytest.param(
            ".cursor/rules/ts.mdc",
            "---\ndescription: TS\nglobs: **/*.ts, **/*.tsx\nalwaysApply: false\n---\n- x\n",
            ("**/*.ts", "**/*.tsx"),
            id="Cursor globs as Cursor writes them (not strict YAML)",
        ),
        pytest.param(
            ".cursor/rules/core.mdc",
            "---\nglobs: src/**\nalwaysApply: true\n---\n- x\n",
            (),
            id="Cursor alwaysApply",
        ),
        pytest.param(
            "web/.cursor/rules/react.mdc",
            '---\nglobs: ["**/*.tsx"]\n---\n- x\n',
            ("web/**/*.tsx",),
            id="nested Cursor rule: globs below its folder",
        ),
        pytest.param(
            "web/.cursor/rules/any.mdc", "- x\n", ("web/**",), id="nested Cursor rule, no globs"
        ),
        pytest.param(
            ".windsurf/rules/go.md",
            "---\ntrigger: glob\nglobs: '**/*.go'\n---\n- x\n",
            ("**/*.go",),
            id="Windsurf glob trigger",
        ),
        pytest.param(
            ".windsurf/rules/all.md",
            "---\ntrigger: always_on\nglobs: '**/*.go'\n---\n- x\n",
            (),
            id="Windsurf always_on",
        ),
        pytest.param(
            ".kiro/steering/api.md",
            '---\ninclusion: fileMatch\nfileMatchPattern: "app/api/**/*"\n---\n- x\n',
            ("app/api/**/*",),
            id="Kiro fileMatch",
        ),
        pytest.param(
            ".kiro/steering/product.md",
            "---\ninclusion: always\n---\n- x\n",
            (),
            id="Kiro always",
        ),
        pytest.param(
            ".clinerules/react.md",
            '---\npaths:\n  - "src/components/**"\n---\n- x\n',
            ("src/components/**",),
            id="Cline paths",
        ),
    ],
)
def test_scope_is_read_as_its_agent_reads_it(path: str, text: str, globs: tuple) -> None:
    result = scoped(path, text)
    assert result.globs == globs
    assert result.warnings == ()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        pytest.param('---\npaths: ["src/**\n---\n- x\n', 1, id="broken YAML"),
        pytest.param("---\npaths:\n  - [unclosed\n---\n- x\n", 2, id="broken list item"),
        pytest.param('---\npaths: "/etc/**"\n---\n- x\n', 1, id="absolute glob"),
        pytest.param('---\npaths: "../other/**"\n---\n- x\n', 1, id="glob leading out"),
        pytest.param('---\npaths: "src/[ab/*.ts"\n---\n- x\n', 1, id="unclosed ["),
        pytest.param('---\npaths: "src/{a,b/*.ts"\n---\n- x\n', 1, id="unclosed {"),
        pytest.param("---\npaths:\n  - 3\n---\n- x\n", 1, id="not a string"),
        pytest.param("---\n- a\n- b\n---\n- x\n", 0, id="not a mapping"),
    ],
)
def test_unreadable_front_matter_is_a_warning_and_the_whole_project(text: str, line: int) -> None:
    result = scoped(".claude/rules/bad.md", text)
    assert result.globs == ()
    assert len(result.warnings) == 1 and result.warnings[0][0] == line


def test_front_matter_is_never_memory_text() -> None:
    text = "---\ndescription: API rules\npaths:\n  - src/api/**\n---\n- Validate input.\n"
    assert [u.text for u in parse(text)] == ["Validate input."]
    assert front_matter(text).data == {"description": "API rules", "paths": ["src/api/**"]}


@pytest.mark.parametrize(
    ("scope", "path", "expected"),
    [
        pytest.param((), "anything/at/all.py", True, id="unscoped covers every file"),
        pytest.param(("services/api/**",), "services/api/app.py", True, id="in the folder"),
        pytest.param(("services/api/**",), "services/api/x/y.py", True, id="deeper"),
        pytest.param(("services/api/**",), "services/web/app.py", False, id="another folder"),
        pytest.param(("**/*.ts",), "a/b.ts", True, id="extension"),
        pytest.param(("**/*.ts",), "a/b.tsx", False, id="another extension"),
    ],
)
def test_covers(scope: tuple, path: str, expected: bool) -> None:
    assert covers(scope, path) is expected


@pytest.mark.parametrize(
    ("a", "b", "meet"),
    [
        pytest.param((), ("services/api/**",), True, id="unscoped meets everything"),
        pytest.param(("services/web/**",), ("services/api/**",), False, id="sibling folders"),
        pytest.param(("services/api/**",), ("services/api/**",), True, id="same folder"),
        pytest.param(("services/**",), ("services/api/**",), True, id="a folder and its child"),
        pytest.param(("**/*.ts",), ("**/*.py",), False, id="different extensions"),
        pytest.param(("**/*.ts",), ("**/*.tsx",), False, id="ts and tsx"),
        pytest.param(("**/*.ts",), ("services/api/**",), True, id="extension meets folder"),
        pytest.param(("src/**/*.ts",), ("lib/**/*.ts",), False, id="different roots"),
        pytest.param(("src/*.ts",), ("src/a/b.ts",), False, id="depths without **"),
        pytest.param(("src/*.ts",), ("src/app.ts",), True, id="a literal the pattern matches"),
        pytest.param(("src/[ab].ts",), ("src/c.ts",), False, id="a literal it does not"),
        pytest.param(("a*/**",), ("b*/**",), False, id="prefixes apart"),
        pytest.param(("a*/**",), ("ab*/**",), True, id="one prefix of the other"),
        pytest.param(("**/test_*.py",), ("**/*_test.py",), True, id="cannot be shown apart"),
        pytest.param(("*/x/**",), ("*/y/**",), False, id="a literal after a wildcard"),
        pytest.param(
            ("services/web/**", "**/*.md"), ("services/api/**",), True, id="any pair meeting"
        ),
    ],
)
def test_can_meet_says_false_only_when_provably_disjoint(a: tuple, b: tuple, meet: bool) -> None:
    assert can_meet(a, b) is meet
    assert can_meet(b, a) is meet


def test_braces_expand_nested() -> None:
    assert expand("src/**/*.{ts,{js,jsx}}") == ["src/**/*.ts", "src/**/*.js", "src/**/*.jsx"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        pytest.param("@AGENTS.md\n", [(0, "AGENTS.md")], id="a lone import"),
        pytest.param(
            "See @README for an overview and @package.json for commands.\n",
            [(0, "README"), (0, "package.json")],
            id="in prose",
        ),
        pytest.param("- @./docs/style.md\n", [(0, "./docs/style.md")], id="in a list item"),
        pytest.param("Use `@scope/pkg` here.\n", [], id="not in a code span"),
        pytest.param("```\n@AGENTS.md\n```\n", [], id="not in a code block"),
        pytest.param("Mail me at me@example.com\n", [], id="not an address"),
        pytest.param("<!--\n@AGENTS.md\n-->\n", [], id="not in a comment"),
        pytest.param("@~/.claude/mine.md\n", [(0, "~/.claude/mine.md")], id="home"),
        pytest.param("Ping @@team\n", [], id="not @@"),
    ],
)
def test_imports_are_found_as_claude_code_finds_them(text: str, found: list) -> None:
    assert imports(text) == found


def test_a_unit_of_imports_alone_is_no_memory() -> None:
    text = "@AGENTS.md\n\n- Run `make test` before pushing.\n\nSee @README for more.\n"
    kept = [u.text for u in parse(text, imports=True)]
    assert kept == ["Run `make test` before pushing.", "See @README for more."]
    assert only_imports("@AGENTS.md @docs/a.md") and not only_imports("@AGENTS.md is good")
