"""A test's teardown stops the warm servers started in its state folder, looking only at
the processes started since the test began."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from servers import last_pid, servers, stop_servers
from support import wait_for


def test_the_teardown_finds_a_server_started_since_the_test_began(tmp_path: Path) -> None:
    """A server of the state folder started after ``last_pid`` was read is found by the
    teardown's narrowed scan, and stopped."""
    state = tmp_path / "state"
    since = last_pid()
    # What the teardown knows a server by: ``serve`` run by a __main__.py, its state folder.
    main = tmp_path / "__main__.py"
    main.write_text("import time\ntime.sleep(60)\n")
    env = {**os.environ, "HOOKBUS_STATE_DIR": str(state)}
    proc = subprocess.Popen([sys.executable, str(main), "serve"], env=env)
    try:
        wait_for(lambda: servers(state, since) == [proc.pid], "the server in the scan")
        assert stop_servers(state, since) == 1
        assert proc.wait(timeout=60) == -9
    finally:
        proc.kill()
        proc.wait()
