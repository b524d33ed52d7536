"""No function over 60 lines in understanding/ and agent/ (issue 23): a long function there is a rule
engine nobody can hold in their head; split it into named steps or a table."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "duocthu"
MAX_LINES = 60


def long_functions(folder: Path, limit: int = MAX_LINES) -> list[str]:
    """Functions (and methods) whose definition, from ``def`` to its last line, passes ``limit`` lines."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append(f"{path.relative_to(folder)}:{node.lineno} {node.name} ({length} lines)")
    return found


@pytest.mark.parametrize("folder", ["understanding", "agent"])
def test_no_function_over_60_lines(folder):
    assert long_functions(PACKAGE / folder) == []


def test_the_checker_counts_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "long.py").write_text(f"def long():\n{body}\n", encoding="utf-8")
    (tmp_path / "short.py").write_text("def short():\n    return 1\n", encoding="utf-8")
    assert [f.split()[1] for f in long_functions(tmp_path)] == ["long"]
