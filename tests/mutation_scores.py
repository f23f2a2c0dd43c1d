"""Mutation scores per module from mutmut's results (``make mutate``); fails under 85% killed.

Usage: ``python -m tests.mutation_scores PATTERN...`` in the repository root after
``mutmut run PATTERN...``: only mutants whose names match a pattern count.  A surviving
mutant that only changes the letter case of an SQL statement is equivalent (SQLite's keywords
and names are case-insensitive) and is left out of the score; every other survivor is listed.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
import sys
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path

from mutmut.stats import status_by_exit_code

GOAL = 0.85
KILLED = {"killed", "timeout", "caught by type check", "segfault"}
_SQL = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE)\b", re.IGNORECASE)


@cache
def functions(mutated_file: Path) -> dict[str, ast.AST]:
    """Every function (originals and mutants) in one of mutmut's mutated files, by name."""
    tree = ast.parse(mutated_file.read_text())
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def sql_case_only(mutated_file: Path, mutant: str) -> bool:
    """Whether the mutant differs from its original only in the case of SQL statements."""
    found = functions(mutated_file)
    name = mutant.split(".")[-1]
    original = found.get(name.rsplit("__mutmut_", 1)[0] + "__mutmut_orig")
    changed = found.get(name)
    if original is None or changed is None:
        return False
    pairs = [
        (a.value, b.value)
        for a, b in zip(ast.walk(original), ast.walk(changed), strict=False)
        if isinstance(a, ast.Constant) and isinstance(b, ast.Constant) and a.value != b.value
    ]
    return bool(pairs) and all(
        isinstance(a, str) and isinstance(b, str) and a.lower() == b.lower() and _SQL.match(a)
        for a, b in pairs
    )


def scores(patterns: list[str], root: Path = Path("mutants")) -> dict[str, Counter[str]]:
    """Mutant statuses per module, for the mutants the patterns name."""
    by_module: dict[str, Counter[str]] = defaultdict(Counter)
    for meta in sorted(root.rglob("*.py.meta")):
        results = json.loads(meta.read_text())["exit_code_by_key"]
        for name, exit_code in results.items():
            if any(fnmatch.fnmatch(name, pattern) for pattern in patterns):
                module = name.split(".x", 1)[0]
                status = status_by_exit_code[exit_code]
                if status == "survived" and sql_case_only(meta.with_suffix(""), name):
                    status = "equivalent"
                by_module[module][status] += 1
    return by_module


def main(patterns: list[str]) -> int:
    """Print the Markdown table; 1 when a module is under the goal or a mutant went unchecked."""
    table = ["| module | mutants | killed | not killed | score |", "|---|---|---|---|---|"]
    failing = []
    for module, statuses in sorted(scores(patterns).items()):
        total = sum(statuses.values())
        killed = sum(statuses[s] for s in KILLED)
        score = killed / (total - statuses["equivalent"])
        others = {s: n for s, n in statuses.items() if s not in KILLED}
        table.append(
            f"| `{module}` | {total} | {killed} | "
            + (", ".join(f"{n} {s}" for s, n in sorted(others.items())) or "0")
            + f" | {score:.0%} |"
        )
        if score < GOAL or statuses["not checked"]:
            failing.append(module)
    sys.stdout.write("\n".join(table) + "\n")
    survivors = [
        name
        for meta in sorted(Path("mutants").rglob("*.py.meta"))
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items()
        if status_by_exit_code[code] in ("survived", "no tests")
        and any(fnmatch.fnmatch(name, pattern) for pattern in patterns)
        and not sql_case_only(meta.with_suffix(""), name)
    ]
    sys.stdout.write("".join(f"not killed: {name}\n" for name in survivors))
    if failing:
        sys.stdout.write(f"under {GOAL:.0%} killed: {', '.join(failing)}\n")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
