"""A real single-node SLURM cluster on this machine, for the workflow's SLURM tests.

``ensure_installed()`` installs Debian's slurm-wlm daemons and munge with apt-get when they are
missing (as root); ``Cluster(state_dir).start()`` writes a ``slurm.conf`` for one node (this
machine's hostname, its CPUs) with every state, spool, log and socket file under ``state_dir``,
starts munged, slurmctld and slurmd in the foreground as child processes, and waits until the node
is idle; ``stop()`` ends exactly those processes.

Client commands find the cluster through ``SLURM_CONF``; but the plugin's job step removes every
``SLURM_*`` variable before it calls ``srun`` inside a job, so ``srun`` reads the default path:
``/etc/slurm/slurm.conf`` is made a symbolic link to the temporary ``slurm.conf`` while the cluster
runs (never over a real file: then the cluster is unavailable, with the reason).

The SLURM executor plugin asks ``sacct`` or ``squeue`` for job states. Without slurmdbd, ``sacct``
fails ("accounting storage is disabled"), so the cluster keeps finished jobs in the controller for an
hour (``MinJobAge=3600``) and the profile selects ``status_command: squeue``, which then sees every
job of the run, finished ones included (the plugin only falls back to ``sacct`` when ``MinJobAge``
is below three initial status intervals).

Command line, for trying the cluster by hand::

    python tests/workflow/slurm_cluster.py start /tmp/slurm   # prints the environment to export
    python tests/workflow/slurm_cluster.py stop /tmp/slurm
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
PROGRAMS = ("slurmctld", "slurmd", "munged", "sbatch", "squeue", "scontrol", "srun", "scancel")


class ClusterUnavailable(RuntimeError):
    """SLURM cannot be installed or started here; the message says why."""


def missing_programs() -> list[str]:
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return [p for p in PROGRAMS if shutil.which(p, path=search) is None]


def ensure_installed() -> None:
    """Install slurm-wlm's daemons and munge with apt-get if any program is missing."""
    if not missing_programs():
        return
    if os.geteuid() != 0:
        raise ClusterUnavailable(
            f"SLURM programs {missing_programs()} are missing and installing them needs root"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in (
        ["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES],
        ["apt-get", "update"],
        ["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES],
    ):
        proc = subprocess.run(args, env=env, capture_output=True, text=True)
        if proc.returncode == 0 and args[1] == "install":
            break
    if missing_programs():
        raise ClusterUnavailable(
            f"apt-get could not install {PACKAGES}: {proc.stderr.strip()[-2000:]}"
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _which(program: str) -> str:
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    found = shutil.which(program, path=search)
    if found is None:
        raise ClusterUnavailable(f"{program} not found")
    return found


class Cluster:
    """One controller and one compute node (this machine) with state under ``state_dir``."""

    def __init__(self, state_dir: str | os.PathLike, *, cpus: int | None = None) -> None:
        self.dir = Path(state_dir).resolve()
        self.node = socket.gethostname().split(".")[0]
        self.cpus = cpus or os.cpu_count() or 1
        self.conf = self.dir / "slurm.conf"
        self.munge_socket = self.dir / "munge" / "munge.socket"
        self.procs: dict[str, subprocess.Popen] = {}

    @property
    def env(self) -> dict[str, str]:
        """Variables that point SLURM's client commands (and the jobs) at this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def _memory_mb(self) -> int:
        out = subprocess.run(
            [_which("slurmd"), "-C"], capture_output=True, text=True, check=True
        ).stdout
        for field in out.split():
            if field.startswith("RealMemory="):
                return int(field.split("=", 1)[1]) * 3 // 4
        return 1024

    def write_config(self) -> None:
        for sub in ("munge", "ctld", "spool", "log"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir / "munge", 0o700)
        d = self.dir
        lines = [
            "ClusterName=delaycvtest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={d / 'ctld'}",
            f"SlurmdSpoolDir={d / 'spool'}",
            f"SlurmctldPidFile={d / 'slurmctld.pid'}",
            f"SlurmdPidFile={d / 'slurmd.pid'}",
            f"SlurmctldLogFile={d / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={d / 'log' / 'slurmd.log'}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            # memory limits are enforced without cgroups: the accounting plugin samples every
            # step's processes each second and kills a step above its job's --mem
            "JobAcctGatherType=jobacct_gather/linux",
            "JobAcctGatherFrequency=task=1",
            "JobAcctGatherParams=OverMemoryKill",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU_Memory",
            "ReturnToService=2",
            # keep finished jobs visible to `squeue --states=all` for the whole run
            "MinJobAge=3600",
            "KillWait=5",
            "InactiveLimit=0",
            "MessageTimeout=20",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} "
            f"RealMemory={self._memory_mb()} State=UNKNOWN",
            f"PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
        ]
        self.conf.write_text("\n".join(lines) + "\n")

    def _spawn(self, name: str, args: list[str]) -> None:
        log = open(self.dir / "log" / f"{name}.out", "ab")  # noqa: SIM115 (kept by the child)
        env = {**os.environ, **self.env}
        self.procs[name] = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        (self.dir / f"{name}.child-pid").write_text(str(self.procs[name].pid))

    def _wait(self, what: str, check, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise ClusterUnavailable(
                        f"{name} exited with {proc.returncode} while waiting for {what}; "
                        f"log: {self.logs()}"
                    )
            if check():
                return
            time.sleep(0.3)
        raise ClusterUnavailable(f"timed out waiting for {what}; log: {self.logs()}")

    def logs(self, tail: int = 3000) -> str:
        parts = []
        for path in sorted((self.dir / "log").glob("*")):
            parts.append(f"--- {path.name}\n{path.read_text(errors='replace')[-tail:]}")
        return "\n".join(parts)

    def scontrol(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [_which("scontrol"), *args],
            capture_output=True,
            text=True,
            env={**os.environ, **self.env},
        )

    def node_state(self) -> str:
        out = self.scontrol("show", "node", self.node).stdout
        for field in out.split():
            if field.startswith("State="):
                return field.split("=", 1)[1]
        return ""

    def _link_system_conf(self) -> None:
        if SYSTEM_CONF.exists() and not SYSTEM_CONF.is_symlink():
            raise ClusterUnavailable(
                f"{SYSTEM_CONF} exists (a real cluster's configuration?); not replacing it"
            )
        SYSTEM_CONF.parent.mkdir(parents=True, exist_ok=True)
        if SYSTEM_CONF.is_symlink():
            SYSTEM_CONF.unlink()
        SYSTEM_CONF.symlink_to(self.conf)

    def _unlink_system_conf(self) -> None:
        if SYSTEM_CONF.is_symlink() and Path(os.readlink(SYSTEM_CONF)) == self.conf:
            SYSTEM_CONF.unlink()

    def start(self) -> Cluster:
        ensure_installed()
        self.write_config()
        self._link_system_conf()
        key = self.dir / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        self._spawn(
            "munged",
            [
                _which("munged"),
                "--foreground",
                "--force",
                f"--socket={self.munge_socket}",
                f"--key-file={key}",
                f"--pid-file={self.dir / 'munge' / 'munged.pid'}",
                f"--seed-file={self.dir / 'munge' / 'munged.seed'}",
                f"--log-file={self.dir / 'log' / 'munged.log'}",
            ],
        )
        self._wait("munged", self.munge_socket.exists)
        self._spawn("slurmctld", [_which("slurmctld"), "-D", "-c", "-f", str(self.conf)])
        self._wait("slurmctld", lambda: self.scontrol("ping").returncode == 0)
        self._spawn("slurmd", [_which("slurmd"), "-D", "-N", self.node, "-f", str(self.conf)])
        self._wait("an idle node", lambda: self.node_state().startswith("IDLE"))
        (self.dir / "env.json").write_text(json.dumps(self.env))
        return self

    def stop(self) -> None:
        """End the daemons this object started (slurmd, then slurmctld, then munged)."""
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.procs.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._unlink_system_conf()

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _stop_from_pid_files(state_dir: Path) -> None:
    for name in ("slurmd", "slurmctld", "munged"):
        pid_file = state_dir / f"{name}.child-pid"
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGTERM)
            pid_file.unlink()
            time.sleep(1)
    conf = (state_dir / "slurm.conf").resolve()
    if SYSTEM_CONF.is_symlink() and Path(os.readlink(SYSTEM_CONF)) == conf:
        SYSTEM_CONF.unlink()


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print(__doc__, file=sys.stderr)
        return 2
    state_dir = Path(argv[1])
    if argv[0] == "stop":
        _stop_from_pid_files(state_dir)
        return 0
    cluster = Cluster(state_dir).start()
    for proc in cluster.procs.values():  # leave them running after this process exits
        proc.returncode = 0
    print(f"export SLURM_CONF={cluster.conf}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
