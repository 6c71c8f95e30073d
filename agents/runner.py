"""The reference runner: claims agent sessions over the REST API and runs a command for each.

It talks to the server over HTTP only, exactly like an external runner would:
claim -> boot_ready when the process has started -> heartbeats while it runs ->
turn_completed on exit 0, failed (with the tail of the output) otherwise.
The command gets the task's context as KANDEV_* environment variables and the claimed
session as JSON on stdin.
"""

import json
import logging
import os
import signal
import subprocess
import threading
import time

import httpx

logger = logging.getLogger(__name__)

TAIL_BYTES = 4000


class SessionGone(Exception):
    """The server no longer lets this runner report on the session (cancelled, expired)."""


class Runner:
    def __init__(
        self,
        *,
        server: str,
        token: str,
        command: str,
        concurrency: int = 1,
        poll_seconds: float = 2.0,
        name: str = "",
        out=None,
    ):
        self.client = httpx.Client(
            base_url=server.rstrip("/") + "/api/v1/",
            headers={"Authorization": f"Token {token}"},
            timeout=30,
        )
        self.command = command
        self.poll_seconds = poll_seconds
        self.name = name or f"agent_runner@{os.uname().nodename}:{os.getpid()}"
        self.slots = threading.BoundedSemaphore(concurrency)
        self.stopping = threading.Event()
        self.workers: list[threading.Thread] = []
        self.processes: dict[str, subprocess.Popen] = {}
        self.lock = threading.Lock()
        self.out = out

    def say(self, message: str) -> None:
        if self.out is not None:
            self.out.write(message)
            self.out.flush()

    # --- the loop --------------------------------------------------------------------

    def run(self) -> None:
        self.say(f"runner {self.name} polling {self.client.base_url}")
        while not self.stopping.is_set():
            if not self.slots.acquire(timeout=self.poll_seconds):
                continue
            session = None
            try:
                session = self.claim()
            except httpx.HTTPError as exc:
                logger.warning("claim failed: %s", exc)
            if session is None:
                self.slots.release()
                self.stopping.wait(self.poll_seconds)
                continue
            worker = threading.Thread(target=self.execute, args=(session,), name=f"session-{session['id']}")
            self.workers.append(worker)
            worker.start()
        self.shutdown()

    def stop(self, *_) -> None:
        self.stopping.set()

    def shutdown(self) -> None:
        """Stop the running commands; their sessions are reported failed (slots freed now,
        not after the lease expires)."""
        with self.lock:
            for process in self.processes.values():
                _signal_group(process, signal.SIGTERM)
        for worker in self.workers:
            worker.join()
        self.client.close()
        self.say("runner stopped")

    # --- protocol --------------------------------------------------------------------

    def claim(self) -> dict | None:
        response = self.client.post("sessions/claim/", json={"runner": self.name})
        if response.status_code == 204:
            return None
        response.raise_for_status()
        return response.json()

    def report(self, session_id: str, type_: str, detail: str = "", attempts: int = 3) -> None:
        for attempt in range(attempts):
            try:
                response = self.client.post(f"sessions/{session_id}/events/", json={"type": type_, "detail": detail})
            except httpx.HTTPError as exc:
                logger.warning("reporting %s for %s failed: %s", type_, session_id, exc)
                time.sleep(0.5 * 2**attempt)
                continue
            if response.status_code in (404, 409):
                raise SessionGone(response.text)
            response.raise_for_status()
            return
        logger.error("gave up reporting %s for session %s; its lease will expire", type_, session_id)

    # --- one session -----------------------------------------------------------------

    def execute(self, session: dict) -> None:
        session_id = session["id"]
        try:
            self.say(f"claimed session {session_id}: {session['task']['title']}")
            self._execute(session)
        except SessionGone as gone:
            self.say(f"session {session_id} ended on the server: {gone}")
        except Exception:
            logger.exception("session %s crashed in the runner", session_id)
        finally:
            with self.lock:
                self.processes.pop(session_id, None)
            self.slots.release()

    def _execute(self, session: dict) -> None:
        session_id = session["id"]
        try:
            process = subprocess.Popen(
                self.command,
                shell=True,
                env=self.environment(session),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            self.report(session_id, "failed", f"The command could not start: {exc}")
            return
        with self.lock:
            self.processes[session_id] = process
        if self.stopping.is_set():
            _signal_group(process, signal.SIGTERM)
        threading.Thread(target=_feed, args=(process, json.dumps(session).encode()), daemon=True).start()
        beating = threading.Event()
        try:
            self.report(session_id, "boot_ready")
            heart = threading.Thread(
                target=self.heartbeat,
                args=(session_id, session.get("lease_seconds", 60), beating, process),
                daemon=True,
            )
            heart.start()
            tail = _read_tail(process)
            code = process.wait()
        except SessionGone:
            _signal_group(process, signal.SIGTERM)
            process.wait()
            raise
        finally:
            beating.set()
        text = tail.decode(errors="replace")
        if code == 0:
            self.report(session_id, "turn_completed", text)
            self.say(f"session {session_id} completed")
        elif self.stopping.is_set():
            self.report(session_id, "failed", f"The runner stopped before the turn completed.\n{text}")
            self.say(f"session {session_id} stopped")
        else:
            self.report(session_id, "failed", f"The command exited with {code}.\n{text}")
            self.say(f"session {session_id} failed with exit code {code}")

    def heartbeat(self, session_id: str, lease_seconds: float, done: threading.Event, process) -> None:
        while not done.wait(max(lease_seconds / 3, 0.5)):
            try:
                self.report(session_id, "heartbeat", attempts=1)
            except SessionGone:
                # Cancelled on the server: stop working on it.
                _signal_group(process, signal.SIGTERM)
                return

    def environment(self, session: dict) -> dict:
        task, step, workflow = session["task"], session.get("step") or {}, session["workflow"]
        return {
            **os.environ,
            "KANDEV_SERVER": str(self.client.base_url),
            "KANDEV_SESSION_ID": session["id"],
            "KANDEV_TASK_ID": task["id"],
            "KANDEV_TASK_TITLE": task["title"],
            "KANDEV_TASK_DESCRIPTION": task["description"],
            "KANDEV_TASK_PRIORITY": task["priority"],
            "KANDEV_TASK_EXTERNAL_REF": task.get("external_ref") or "",
            "KANDEV_STEP_ID": step.get("id", ""),
            "KANDEV_STEP_NAME": step.get("name", ""),
            "KANDEV_WORKFLOW_ID": workflow["id"],
            "KANDEV_WORKFLOW_NAME": workflow["name"],
            "KANDEV_WORKSPACE_ID": workflow["workspace_id"],
        }


def _feed(process: subprocess.Popen, payload: bytes) -> None:
    # A separate thread, so a command that never reads stdin cannot block the runner.
    try:
        process.stdin.write(payload)
        process.stdin.close()
    except (BrokenPipeError, OSError):
        pass


def _read_tail(process: subprocess.Popen) -> bytes:
    tail = bytearray()
    while chunk := process.stdout.read1(65536):
        tail += chunk
        del tail[:-TAIL_BYTES]
    return bytes(tail)


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass
