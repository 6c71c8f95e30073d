"""Tasks from a CSV file (a spreadsheet), into a new board or an existing one.

The header names the columns, in any order and case; only `title` is required:

    title, description, step, priority, assignee, class_of_service, blocked_reason, blocked_type, archived

`step` (or `list`, `status`, `column`) names the task's step; `name` or `summary` may stand
for `title`. Other columns are skipped and listed in the answer (`skipped_columns`). Into a
new board the steps are the `step` values in the order they first appear (the first one the
start step, the last one a done step; "To do, Doing, Done" when no row names a step), and a
row without one lands in the first; into an existing board a step must be one of its own,
and a row without one lands in its start step. `priority` is critical, high, medium (the
default), low or none; `assignee` a username of a member; `blocked_type` a blocker type's
name (found without case, or made), kept with a `blocked_reason`; `archived` yes/no (true/false,
1/0). Errors name the row by its line in the file (the header is line 1): `rows[3].priority`.
"""

import csv
import io

from boards.imports import (
    DryRun,
    ImportResult,
    TaskReader,
    check_count,
    new_board,
    place_rows,
)
from boards.locking import board_transaction
from common.errors import Invalid
from workflows.step_rules import MAX_STEPS, name_errors

COLUMNS = (
    "title",
    "description",
    "step",
    "priority",
    "assignee",
    "class_of_service",
    "blocked_reason",
    "blocked_type",
    "archived",
)
ALIASES = {"name": "title", "summary": "title", "list": "step", "status": "step", "column": "step"}
DEFAULT_STEPS = ["To do", "Doing", "Done"]
YES, NO = {"yes", "true", "1", "y"}, {"no", "false", "0", "n", ""}


def read_csv(raw: bytes) -> tuple[list[dict], list[str]]:
    """The data rows as {column: value} with their line numbers (`_line`), and the skipped
    columns. A file that is not UTF-8 CSV with a `title` column is a 400."""
    try:
        text = raw.decode("utf-8-sig")  # a spreadsheet's byte-order mark is not part of the header
    except UnicodeDecodeError as exc:
        raise Invalid({"file": [f"The file is not UTF-8 text (byte {exc.start})."]}) from None
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") > first.count(",") else ","  # what some spreadsheets write
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, [])
        names = [ALIASES.get(h.strip().lower(), h.strip().lower()) for h in header]
        if "title" not in names:
            raise Invalid({"file": ["The first line must be a header with a title column."]})
        duplicated = sorted({n for n in names if n in COLUMNS and names.count(n) > 1})
        if duplicated:
            raise Invalid({"file": [f"Columns named twice: {', '.join(duplicated)}."]})
        rows = []
        for line in reader:
            if not any(cell.strip() for cell in line):
                continue  # blank lines: spreadsheets leave them at the end
            check_count(len(rows) + 1, "file")
            row = {name: cell for name, cell in zip(names, line, strict=False) if name in COLUMNS}
            row["_line"] = reader.line_num
            rows.append(row)
    except csv.Error as exc:
        raise Invalid({"file": [f"Not readable as CSV at line {reader.line_num}: {exc}."]}) from None
    return rows, [h for h, n in zip(header, names, strict=True) if n not in COLUMNS and h.strip()]


def csv_import(*, workspace, raw: bytes, actor, name: str = "", workflow=None, dry_run: bool = False) -> dict:
    """Import the CSV file `raw` into a new board named `name` or into `workflow`: the answer's
    body. A preview (`dry_run`) runs the very same import and rolls it back."""
    rows, skipped = read_csv(raw)
    try:
        result = _import(workspace=workspace, rows=rows, actor=actor, name=name, workflow=workflow, dry_run=dry_run)
    except DryRun as preview:
        result = preview.result
        result.workflow_id = None
    return {**result.as_body(), "dry_run": dry_run, "skipped_columns": skipped}


@board_transaction
def _import(*, workspace, rows, actor, name, workflow, dry_run) -> ImportResult:
    if workflow is None:
        workflow = new_board(workspace, name or "Imported tasks", _new_steps(rows))
    steps = list(workflow.steps.order_by("position"))
    by_name = {}
    for step in steps:
        by_name.setdefault(step.name.casefold(), step)
    start = next((s for s in steps if s.is_start_step), steps[0] if steps else None)
    reader = TaskReader(workspace.pk)
    tasks = []
    for row in rows:
        path = f"rows[{row['_line']}]"
        step_name = (row.get("step") or "").strip()
        step = by_name.get(step_name.casefold()) if step_name else start
        if step is None:
            reader.error(
                f"{path}.step", f'The board has no step "{step_name}".' if step_name else "The board has no steps."
            )
        archived = (row.get("archived") or "").strip().lower()
        if archived not in YES | NO:
            reader.error(f"{path}.archived", "Must be yes or no.")
        values = {**row, "archived": archived in YES}
        values.pop("step", None)
        task = reader.read(path, step, values)
        if task is not None:
            task.ref = row["_line"]
            tasks.append(task)
    reader.check("The file has errors; nothing was imported.")
    return place_rows(workflow, tasks, actor=actor, dry_run=dry_run)


def _new_steps(rows) -> list[str]:
    names = {}  # the first spelling of each name, case aside
    for row in rows:
        name = (row.get("step") or "").strip()
        if name:
            names.setdefault(name.casefold(), name)
    names = list(names.values())
    errors = {}
    for name in names:
        for message in name_errors(name):
            line = next(row["_line"] for row in rows if (row.get("step") or "").strip().casefold() == name.casefold())
            errors.setdefault(f"rows[{line}].step", []).append(message)
    if len(names) > MAX_STEPS:
        errors["file"] = [f"A board holds at most {MAX_STEPS} steps; the file names {len(names)}."]
    if errors:
        raise Invalid(errors, detail="The file has errors; nothing was imported.")
    return names or DEFAULT_STEPS
