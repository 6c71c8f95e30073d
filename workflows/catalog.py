"""The workflow templates as the board picker and the API list them: those for people first,
each saying whether it starts agents and summing up its steps, limits and pulls in a line."""

from workflows.portable import templates


def starts_agents(template: dict) -> bool:
    return any(
        action.get("type") == "auto_start_agent"
        for step in template["steps"]
        for actions in (step.get("events") or {}).values()
        for action in actions or []
    )


def summary(template: dict) -> str:
    """ "Backlog → Ready (limit 5) → In Progress (limit 3, pulls from Ready) → Done. No agents.\""""
    steps = sorted(template["steps"], key=lambda s: s["position"])
    name_at = {s["position"]: s["name"] for s in steps}
    parts = []
    for step in steps:
        notes = [f"limit {step['wip_limit']}"] if step.get("wip_limit") else []
        if step.get("pull_from_step_position") is not None:
            notes.append(f"pulls from {name_at[step['pull_from_step_position']]}")
        if any(a.get("type") == "auto_start_agent" for a in (step.get("events") or {}).get("on_enter") or []):
            notes.append("starts an agent")
        parts.append(f"{step['name']} ({', '.join(notes)})" if notes else step["name"])
    agents = "Starts agents: needs a runner." if starts_agents(template) else "No agents."
    return f"{' → '.join(parts)}. {agents}"


def catalog() -> list[dict]:
    listed = [{**t, "starts_agents": starts_agents(t), "summary": summary(t)} for t in templates().values()]
    return sorted(listed, key=lambda t: t["starts_agents"])  # stable: by file name within each kind
