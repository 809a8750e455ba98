"""A stdio tap: relays between a client (our stdin/stdout) and a server it starts, logging
every line that crosses, so a test can validate traffic between two processes it does not own.

    python tests/interop/wire_tap.py LOG -- SERVER_COMMAND [ARGS...]

LOG gets one JSON line per message: ``{"to": "server"|"client", "line": "<the raw line>"}``,
flushed at once. A request is always logged before the server can answer it, so the log's
order is a valid order for request/response pairing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import IO


def main() -> int:
    log_path, sep, *command = sys.argv[1:]
    assert sep == "--" and command, __doc__
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    lock = threading.Lock()
    with open(log_path, "a", encoding="utf-8") as log:

        def relay(src: IO[bytes], dst: IO[bytes], to: str) -> None:
            for line in iter(src.readline, b""):
                with lock:
                    log.write(
                        json.dumps({"to": to, "line": line.decode("utf-8", "replace")}) + "\n"
                    )
                    log.flush()
                try:
                    dst.write(line)
                    dst.flush()
                except (BrokenPipeError, OSError):
                    break
            try:
                dst.close()
            except OSError:
                pass

        up = threading.Thread(
            target=relay, args=(sys.stdin.buffer, child.stdin, "server"), daemon=True
        )
        down = threading.Thread(target=relay, args=(child.stdout, sys.stdout.buffer, "client"))
        up.start()
        down.start()
        down.join()  # the server closed its stdout (it exits when our stdin ends)
        return child.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
