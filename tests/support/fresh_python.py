"""Code run in a fresh interpreter: what a command or a job does to its own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO


def imported_after(
    code: str, cwd: Path | None = None, *, environment: dict[str, str | None] | None = None
) -> dict:
    """Run ``code`` in a fresh interpreter (this checkout first on the path); what it left in
    ``RESULT`` and the names of sys.modules at its end. ``environment`` changes this process's
    environment for it (None removes a variable)."""
    probe = (
        "import json, sys\n"
        "RESULT = None\n"
        f"{code}\n"
        "print(json.dumps({'result': RESULT, 'modules': sorted(sys.modules)}))\n"
    )
    env = dict(os.environ)
    for name, value in (environment or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env["DELAYCV_KEEP_TEARDOWN"] = "1"  # the command returns to the probe instead of ending
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])
