"""Deliberate breaks the tests must catch: each mutant is a one-line change to the code
(a full step admits, the pull order reversed, no settle after a change, a viewer may write,
a stale board snapshot served), applied to a temporary copy of the working tree; the test
files that guard that rule run against it, and the first test that fails is printed.
A mutant no test fails is reported as SURVIVED and the run exits 1.

    .venv/bin/python bench/mutants.py [name ...]      (DATABASE_URL / REDIS_URL as for bin/test)

A mutant whose line is not found exactly once stops the run: the code moved, and the
mutant's `find` must follow it.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    find: str
    replace: str
    tests: tuple[str, ...]


MUTANTS = (
    Mutant(
        "admission: a full step admits",
        "boards/limits.py",
        "return self.occupied >= self.limit",
        "return self.occupied > self.limit",
        ("tests/boards/test_admission.py",),
    ),
    Mutant(
        "pull: order reversed",
        "boards/models.py",
        "return self.order_by(*PULL_ORDER)",
        "return self.order_by(*PULL_ORDER).reverse()",
        ("tests/boards/test_pull.py",),
    ),
    Mutant(
        "settle: no settle after a change",
        "boards/changes.py",
        "    yield change\n    settle(change)\n",
        "    yield change\n",
        ("tests/boards/test_settled.py",),
    ),
    Mutant(
        "access: a viewer may write",
        "workflows/access.py",
        "WRITE_ROLES = {Role.OWNER, Role.MEMBER}",
        "WRITE_ROLES = {Role.OWNER, Role.MEMBER, Role.VIEWER}",
        ("tests/security/test_access_matrix.py",),
    ),
    Mutant(
        "snapshot: a stale cached snapshot is served",
        "boards/snapshots.py",
        "if kept is None or kept.version < version:",
        "if kept is None:",
        ("tests/boards/test_board_snapshot_cache.py",),
    ),
)


def tree_copy(into: Path) -> Path:
    """The working tree as it is (tracked and new files, uncommitted changes included)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for name in filter(None, (entry.decode() for entry in listed)):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def first_failure(output: str) -> str | None:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" ", 1)[1].split(" - ")[0]
    return None


def run(mutant: Mutant, tree: Path) -> tuple[str | None, float]:
    """Apply the mutant, run its tests until the first failure, undo it."""
    target = tree / mutant.path
    original = target.read_text()
    if original.count(mutant.find) != 1:
        raise SystemExit(f"{mutant.name}: {mutant.find!r} is not found exactly once in {mutant.path}")
    target.write_text(original.replace(mutant.find, mutant.replace))
    started = time.monotonic()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "--tb=no", "-rfE", "-p", "no:cacheprovider", *mutant.tests],
            cwd=tree,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            capture_output=True,
            text=True,
        )
    finally:
        target.write_text(original)
    if result.returncode not in (0, 1):  # not a test outcome: no tests, a usage or internal error
        raise SystemExit(
            f"{mutant.name}: pytest exited {result.returncode}\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
        )
    return first_failure(result.stdout), time.monotonic() - started


def main(names: list[str]) -> int:
    chosen = [m for m in MUTANTS if not names or any(n in m.name for n in names)]
    survived = 0
    with tempfile.TemporaryDirectory(prefix="kandev-mutants-") as temporary:
        tree = tree_copy(Path(temporary))
        for mutant in chosen:
            failed, seconds = run(mutant, tree)
            if failed is None:
                survived += 1
            verdict = f"caught by {failed}" if failed else "SURVIVED"
            print(f"{mutant.name:45} {verdict}  ({seconds:.0f} s)", flush=True)
    print(f"{len(chosen) - survived} of {len(chosen)} mutants caught")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
