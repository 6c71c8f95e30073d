"""compose.yaml, proved without Docker: each kandev service's own command, with its own
environment (pointed at the local PostgreSQL and Redis and a fresh database), runs as a local
process; two web processes and the worker then serve a create, a pull and a live message."""

import json
import os
import re
import secrets
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import httpx
import pytest
import yaml
from websockets.sync.client import connect

from tests.servers import ROOT, Server, eventually, free_port, fresh_database
from tests.stress.seed import seed

pytestmark = pytest.mark.slow

CONTAINER_PORT = "8000"
VARIABLE = re.compile(r"\$\{(\w+)(?::([-?])([^}]*))?\}")


def interpolate(value, variables: dict):
    """Compose's `${NAME}`, `${NAME:-default}` and `${NAME:?error}` in every string."""
    if isinstance(value, dict):
        return {k: interpolate(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, variables) for v in value]
    if not isinstance(value, str):
        return value

    def one(match):
        name, kind, other = match.groups()
        if variables.get(name):
            return variables[name]
        if kind == "?":
            raise KeyError(f"{name}: {other}")
        return other if kind == "-" else ""

    return VARIABLE.sub(one, value)


@pytest.fixture(scope="module")
def compose():
    text = (ROOT / "compose.yaml").read_text()
    return interpolate(yaml.safe_load(text), {"SECRET_KEY": secrets.token_urlsafe(50)})


def local(value, port: str):
    """A container's command line on this machine: loopback, and this process's own port."""
    if isinstance(value, list):
        return [local(v, port) for v in value]
    return value.replace("0.0.0.0", "127.0.0.1").replace(CONTAINER_PORT, port)


def local_env(service: dict, database: str, **extra: str) -> dict:
    env = {k: str(v) for k, v in service["environment"].items()}
    assert env["DATABASE_URL"].split("@")[1].startswith("db:")  # the compose services
    assert env["REDIS_URL"].startswith("redis://redis:")
    env_without_test_settings = {k: v for k, v in os.environ.items() if k not in {"DJANGO_ALLOW_ASYNC_UNSAFE", "DEBUG"}}
    return {
        **env_without_test_settings,
        **env,
        "DATABASE_URL": database,
        "REDIS_URL": os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0",
        # As in the image: `python` and `uvicorn` are the installed ones, output unbuffered
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


def test_the_deployment_is_official_images_and_kandev_services(compose):
    services = compose["services"]
    assert services["db"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    kandev = {name for name, service in services.items() if "build" in service}
    assert kandev == {"migrate", "web", "worker"}
    for name in ("web", "worker"):
        assert services[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert services[name]["environment"]["KANDEV_BACKGROUND"] == "worker"
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])
    assert "--workers 2" in " ".join(services["web"]["command"])  # the default N


def test_its_services_serve_a_create_a_pull_and_a_live_message_across_two_web_processes(compose, tmp_path):
    services = compose["services"]
    with fresh_database("compose", migrate=False) as database:
        migrate = services["migrate"]
        subprocess.run(migrate["command"], cwd=ROOT, env=local_env(migrate, database), check=True)
        people = seed(database)
        web = services["web"]
        ports = [str(free_port()), str(free_port())]
        webs = [  # each container collects its static files into its own file system
            Server(
                local_env(web, database, STATIC_ROOT=str(tmp_path / f"static{i}")),
                command=local(web["command"], port),
                port=int(port),
            )
            for i, port in enumerate(ports)
        ]
        worker = Server(local_env(services["worker"], database), command=services["worker"]["command"])
        with closing(worker), webs[0].start(timeout=180), webs[1].start(timeout=180):
            worker.launch()  # no HTTP: it shows its passes on its output
            for port, server in zip(ports, webs, strict=True):
                health = local(web["healthcheck"]["test"][1:], port)  # after "CMD"
                assert subprocess.run(health, env=server.env).returncode == 0, server.log()
            drive_a_pull_across(webs, people)
            eventually(lambda: "boards filled" in worker.log())
            assert worker.process.poll() is None, worker.log()


def drive_a_pull_across(webs, people):
    first, second = webs
    key = people["tokens"]["owner"]
    auth = {"Authorization": f"Token {key}"}
    with httpx.Client(base_url=first.url, headers=auth, timeout=30) as api:
        body = {"workspace_id": people["workspace_id"], "name": "Compose"}
        workflow = api.post("/api/v1/workflows/", json=body).json()["id"]

        def step(**fields):
            created = api.post("/api/v1/steps/", json={"workflow_id": workflow, **fields})
            assert created.status_code == 201, created.text
            return created.json()["id"]

        backlog = step(name="Backlog", is_start_step=True)
        doing = step(name="Doing", wip_limit=1, pull_from_step_id=backlog)
        done = step(name="Done")

        def task(title, step_id):
            created = api.post("/api/v1/tasks/", json={"step_id": step_id, "title": title})
            assert created.status_code == 201, created.text
            return created.json()["id"]

        busy = task("busy", doing)
        waiting = task("waiting", backlog)  # Doing is full: it waits in Backlog

        ws_url = second.url.replace("http://", "ws://")
        with connect(
            f"{ws_url}/ws/workflows/{workflow}/?token={key}",
            additional_headers={"Origin": second.url},
            open_timeout=10,
        ) as viewer:
            snapshot = json.loads(viewer.recv(timeout=10))
            assert snapshot["type"] == "board.snapshot"
            moved = api.post(f"/api/v1/tasks/{busy}/move/", json={"step_id": done})
            assert moved.status_code == 200, moved.text
            message = json.loads(viewer.recv(timeout=10))  # from the other process, via Redis
        board = httpx.get(f"{second.url}/api/v1/workflows/{workflow}/board/", headers=auth).json()
    assert message["version"] == board["workflow"]["version"] == snapshot["version"] + 1
    assert waiting in json.dumps(message)  # the pull travelled with the move
    assert {s["id"]: [t["id"] for t in s["tasks"]] for s in board["steps"]} == {
        backlog: [],
        doing: [waiting],
        done: [busy],
    }
