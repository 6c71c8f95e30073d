"""A Trello board's JSON export (Trello: Board menu, Print and export, Export as JSON) into a
new kandev board.

Open lists become the steps, in Trello's order (`pos`): the first is the start step (a
backlog), the last a done step. Cards become tasks in their list's step, in their order;
a closed (archived) card, or a card of a closed list (in the first step), comes in archived.
A card keeps its name (the title), description, labels (a Trello label without a name is
named for its colour), due date, checklists (their items, one list after another) and
comments (the export's `commentCard` actions: their text, time and author, who is named in
the text unless a member of the workspace has that username). What kandev has no place for
yet (attachments, members) is counted in the answer's `skipped`, so nobody takes its absence
for a loss the import hid.
"""

from boards.imports import DryRun, ImportResult, TaskReader, check_count, new_board, place_rows
from boards.locking import board_transaction
from common.errors import Invalid
from workflows.step_rules import MAX_NAME, MAX_STEPS, name_errors

NOT_TRELLO = "Not a Trello board export: a JSON object with lists and cards."


def trello_import(*, workspace, document, actor, name: str = "", dry_run: bool = False) -> dict:
    lists, cards, skipped = _read(document)
    try:
        result = _import(
            workspace=workspace,
            lists=lists,
            cards=cards,
            labels=_labels(document),
            checklists=_checklists(document),
            comments=_comments(document),
            actor=actor,
            name=name or _name(document),
            dry_run=dry_run,
        )
    except DryRun as preview:
        result = preview.result
        result.workflow_id = None
    return {**result.as_body(), "dry_run": dry_run, "skipped": skipped}


def _name(document) -> str:
    name = document.get("name")
    name = name.strip()[:MAX_NAME] if isinstance(name, str) else ""
    return name if name and not name_errors(name) else "Imported from Trello"


def _read(document) -> tuple[list[dict], list[tuple[int, dict]], dict]:
    """The open lists in order, the cards (with their index in the file) in list and card
    order, and the counts of what is skipped. Shape errors are a 400, nothing read further."""
    if not isinstance(document, dict) or not isinstance(document.get("lists"), list):
        raise Invalid({"lists": [NOT_TRELLO]}, detail=NOT_TRELLO)
    if not isinstance(document.get("cards"), list):
        raise Invalid({"cards": [NOT_TRELLO]}, detail=NOT_TRELLO)
    check_count(len(document["cards"]), "cards")
    errors = {}
    lists = []
    for i, item in enumerate(document["lists"]):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("name"), str):
            errors[f"lists[{i}]"] = ["A list needs an id and a name."]
            continue
        problems = name_errors(item["name"].strip())
        if problems and not item.get("closed"):
            errors[f"lists[{i}].name"] = problems
        lists.append({**item, "_index": i})
    open_lists = sorted((x for x in lists if not x.get("closed")), key=lambda x: (_pos(x), x["_index"]))
    if not open_lists:
        errors.setdefault("lists", []).append("The board has no open list to make a step of.")
    if len(open_lists) > MAX_STEPS:
        errors["lists"] = [f"A board holds at most {MAX_STEPS} steps; this one has {len(open_lists)} open lists."]
    known = {x["id"]: x for x in lists}
    order = {x["id"]: n for n, x in enumerate(open_lists)}
    cards = []
    for i, card in enumerate(document["cards"]):
        if not isinstance(card, dict):
            errors[f"cards[{i}]"] = ["A card must be an object."]
        elif card.get("idList") not in known:
            errors[f"cards[{i}].idList"] = ["Not a list of this board."]
        else:
            cards.append((i, card))
    if errors:
        raise Invalid(errors, detail="The Trello export has errors; nothing was imported.")
    cards.sort(key=lambda entry: (order.get(entry[1]["idList"], -1), _pos(entry[1]), entry[0]))
    return open_lists, cards, _skipped(document, cards, known)


def _pos(item: dict) -> float:
    pos = item.get("pos")
    return float(pos) if isinstance(pos, int | float) and not isinstance(pos, bool) else 0.0


def _skipped(document: dict, cards: list, lists: dict) -> dict:
    def count(name):
        items = document.get(name)
        return len(items) if isinstance(items, list) else 0

    return {
        "attachments": sum(len(c.get("attachments") or []) for _, c in cards if isinstance(c.get("attachments"), list)),
        "members": count("members"),
        "closed_lists": sum(1 for x in lists.values() if x.get("closed")),
    }


# Trello's label colours by kandev's names (its light and dark variants too).
TRELLO_COLORS = {"sky": "teal", "lime": "green", "black": "gray"}


def _labels(document: dict) -> dict:
    """{Trello label id: {"name", "color"}}."""
    found = {}
    for label in document.get("labels") or []:
        if not isinstance(label, dict) or not isinstance(label.get("id"), str):
            continue
        color = label.get("color") if isinstance(label.get("color"), str) else ""
        color = color.split("_")[0]
        name = label.get("name") if isinstance(label.get("name"), str) and label["name"].strip() else color.title()
        found[label["id"]] = {"name": name or "Label", "color": TRELLO_COLORS.get(color, color)}
    return found


def _checklists(document: dict) -> dict:
    """{card id: [{"text", "done"}]}: a card's checklists in their order, their items in theirs."""
    lists = [
        c for c in document.get("checklists") or [] if isinstance(c, dict) and isinstance(c.get("checkItems"), list)
    ]
    items = {}
    for checklist in sorted(lists, key=_pos):
        entries = [item for item in checklist["checkItems"] if isinstance(item, dict)]
        items.setdefault(checklist.get("idCard"), []).extend(
            {"text": item.get("name"), "done": item.get("state") == "complete"} for item in sorted(entries, key=_pos)
        )
    return items


@board_transaction
def _import(*, workspace, lists, cards, labels, checklists, comments, actor, name, dry_run) -> ImportResult:
    workflow = new_board(workspace, name, [x["name"].strip() for x in lists])
    steps = {x["id"]: step for x, step in zip(lists, workflow.steps.order_by("position"), strict=True)}
    first = steps[lists[0]["id"]]
    reader = TaskReader(workspace.pk)
    tasks = []
    for i, card in cards:
        step = steps.get(card["idList"])
        values = {
            "title": card.get("name"),
            "description": card.get("desc") or "",
            "archived": bool(card.get("closed")) or step is None,  # a card of a closed list
            "labels": [labels[pk] for pk in card.get("idLabels") or [] if isinstance(pk, str) and pk in labels],
            "due_at": card.get("due"),
            "checklist": checklists.get(card.get("id"), []),
            "comments": comments.get(card.get("id"), []),
        }
        task = reader.read(f"cards[{i}]", step or first, values)
        if task is not None:
            tasks.append(task)
    reader.check("The Trello export has errors; nothing was imported.")
    return place_rows(workflow, tasks, actor=actor, dry_run=dry_run)


def _comments(document: dict) -> dict:
    """The cards' comments, {card id: [{body, author, created_at}]} oldest first, from the
    export's `commentCard` actions (it holds the latest actions only)."""
    found = {}
    for action in document.get("actions") or []:
        if not isinstance(action, dict) or action.get("type") != "commentCard":
            continue
        data = action.get("data") if isinstance(action.get("data"), dict) else {}
        card = data.get("card") if isinstance(data.get("card"), dict) else {}
        creator = action.get("memberCreator") if isinstance(action.get("memberCreator"), dict) else {}
        found.setdefault(card.get("id"), []).append(
            {"body": data.get("text"), "author": creator.get("username"), "created_at": action.get("date")}
        )
    for comments in found.values():
        comments.sort(key=lambda c: str(c["created_at"] or ""))
    return found
