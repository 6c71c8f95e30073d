"""A workspace's blocker types: the list a block's type is chosen from.

A block keeps its free-text reason; its type (optional) groups it with others in the flow
figures. The types are read on every board of the workspace, so each change to one is a
change of each of those boards, in one transaction: viewers get `blocker_type.updated` (a
new type or a new name) or `blocker_type.deleted` (with every task of theirs that lost it;
the block itself stays).
"""

from contextlib import ExitStack

from boards.change import BoardChange
from boards.changes import announce_everywhere, delete_everywhere, made_by_name, workspace_boards
from boards.locking import board_transaction
from boards.models import BLOCKER_TYPES_PER_WORKSPACE_MAX, BlockerType
from common.errors import Conflict, Invalid
from common.validation import check_name_free, name_held

NAME_TAKEN = "A blocker type with this name already exists in this workspace."


def blocker_type_data(blocker_type: BlockerType) -> dict:
    """A blocker type as the API, MCP and live messages show it."""
    return {"id": str(blocker_type.pk), "workspace_id": str(blocker_type.workspace_id), "name": blocker_type.name}


@board_transaction
def blocker_type_create(*, workspace_id, actor, name: str) -> BlockerType:
    with ExitStack() as boards:
        changes = workspace_boards(boards, workspace_id, actor)
        types = BlockerType.objects.filter(workspace_id=workspace_id)
        if types.count() >= BLOCKER_TYPES_PER_WORKSPACE_MAX:
            raise Conflict(
                f"A workspace has at most {BLOCKER_TYPES_PER_WORKSPACE_MAX} blocker types.",
                code="too_many_blocker_types",
            )
        check_name_free(types, name, NAME_TAKEN)
        with name_held(NAME_TAKEN):
            blocker_type = BlockerType.objects.create(workspace_id=workspace_id, name=name)
        announce_everywhere(changes, "blocker_type.updated", blocker_type=blocker_type_data(blocker_type))
        return blocker_type


@board_transaction
def blocker_type_rename(*, blocker_type: BlockerType, actor, name: str) -> BlockerType:
    """Rename a type; the blocks that carry it keep it (the history keeps the old name)."""
    with ExitStack() as boards:
        changes = workspace_boards(boards, blocker_type.workspace_id, actor)
        blocker_type = BlockerType.objects.select_for_update().get(pk=blocker_type.pk)
        others = BlockerType.objects.filter(workspace_id=blocker_type.workspace_id).exclude(pk=blocker_type.pk)
        check_name_free(others, name, NAME_TAKEN)
        blocker_type.name = name
        with name_held(NAME_TAKEN):
            blocker_type.save(update_fields=["name"])
        announce_everywhere(changes, "blocker_type.updated", blocker_type=blocker_type_data(blocker_type))
        return blocker_type


@board_transaction
def blocker_type_delete(*, blocker_type: BlockerType, actor) -> None:
    """Delete a type: the tasks blocked with it stay blocked, without a type."""
    delete_everywhere(
        blocker_type,
        actor,
        held_by={"blocked_type": blocker_type},
        without=lambda task: {"blocked_type": None},
        message="blocker_type.deleted",
        blocker_type_id=str(blocker_type.pk),
    )


def block_detail(blocker_type: BlockerType | None) -> dict:
    """A `blocked` event's type: its id and its name then. The flow figures group by the id,
    and a type renamed or deleted since keeps the name it had."""
    return {"type_id": str(blocker_type.pk), "type": blocker_type.name} if blocker_type else {}


def types_named(change: BoardChange, names: list[str]) -> dict:
    """{lowercase name: BlockerType} of the workspace for `names` (an import's), making those
    it lacks; a type made here reaches every other board of the workspace as a type change."""
    return made_by_name(
        change,
        BlockerType,
        {name.lower(): {"name": name} for name in names},
        most=BLOCKER_TYPES_PER_WORKSPACE_MAX,
        field="blocked_type",
        message="blocker_type.updated",
        data=lambda made: {"blocker_type": blocker_type_data(made)},
    )


def type_for_block(change: BoardChange, blocked_type_id) -> BlockerType | None:
    """The type a block names (`blocked_type_id`, None for none): one of the board's
    workspace, else a 400 on the field. The board's lock orders this after any change of the
    workspace's types, so the type found is not deleted before the block commits."""
    if blocked_type_id is None:
        return None
    found = BlockerType.objects.filter(workspace_id=change.workflow.workspace_id, pk=blocked_type_id).first()
    if found is None:
        raise Invalid({"blocked_type_id": ["No such blocker type in this workspace."]})
    return found
