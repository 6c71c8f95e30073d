"""One kandev server worker on an inherited listening socket (`python -m tests.stress.serve FD`).

Several workers share one socket, like a pre-fork server: the kernel hands each
connection to one of them, and a killed worker's siblings keep serving the same port.
"""

import socket
import sys

import uvicorn


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    config = uvicorn.Config(
        "kandev.asgi:application", lifespan="off", log_level="warning", access_log=False
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
