"""A real local Flower deployment: one ``flower-superlink`` and several ``flower-supernode``
processes over 127.0.0.1, the app submitted with ``flwr run`` -- Flower's own command lines.

The SuperNodes launch the ClientApp with the interpreter of their environment (``bin``): point
``bin`` at our environment and the participants compute on our torch. Every process gets its
own ``FLWR_HOME`` under ``workdir``, so nothing is read from or written to the user's
``~/.flwr``. Runtime installation of app dependencies is disabled: the environment already has
them, and nothing is fetched while a run is live.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited ({proc.returncode}) before listening:\n{log.read_text()[-3000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{proc.args[0]} did not listen on 127.0.0.1:{port} within {timeout} s")


@dataclass
class Deployment:
    bin: Path                     # the environment's bin/ (flower-superlink, flower-supernode, flwr)
    workdir: Path
    nodes: int
    node_config: list = field(default_factory=list)   # per node: extra "key=value" node config
    simulation: bool = False      # Flower's simulation runtime (Ray) instead of SuperNode processes
    procs: dict = field(default_factory=dict)

    def _env(self, home: str) -> dict:
        env = dict(os.environ)
        env["FLWR_HOME"] = str(self.workdir / home)
        # inherited by everything the deployment starts, however detached (Ray's workers leave
        # the process group): stop() finds them by it
        env[_MARK] = str(self.workdir.resolve())
        # the SuperLink and SuperNodes spawn flower-superexec and the app processes by name
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return env

    def _start(self, name: str, argv: list, home: str) -> subprocess.Popen:
        log = self.workdir / f"{name}.log"
        (self.workdir / home).mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=self._env(home),
                                start_new_session=True)  # its own group: stop() ends its children too
        self.procs[name] = proc
        return proc

    def start(self, timeout: float = 120.0) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        link = self._start("superlink", [str(self.bin / "flower-superlink"), "--insecure", "--port", str(self.port),
                                         *(["--simulation"] if self.simulation else []),
                                         # a file: the in-memory database answers concurrent
                                         # SuperNodes with HTTP 500 (sqlite "no transaction")
                                         "--database", str(self.workdir / "superlink.db"),
                                         "--disable-runtime-dependency-installation"],
                           "superlink")
        _wait_port(self.port, link, self.workdir / "superlink.log", timeout)
        for i in range(0 if self.simulation else self.nodes):
            extra = self.node_config[i] if i < len(self.node_config) else ""
            self._start(f"supernode{i}", [str(self.bin / "flower-supernode"), "--insecure",
                                          "--superlink", f"127.0.0.1:{self.port}", "--port", str(free_port()),
                                          "--node-config", f"partition-id={i} {extra}".strip()], f"supernode{i}")
        # the `flwr` command line reads its SuperLink connections from $FLWR_HOME/config.toml
        home = self.workdir / "cli"
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            f'[superlink]\ndefault = "local-deployment"\n\n[superlink.local-deployment]\n'
            f'address = "127.0.0.1:{self.port}"\ninsecure = true\n'
            + (f"options.num-supernodes = {self.nodes}\n" if self.simulation else ""))

    def run(self, app_dir: Path, run_config: dict, timeout: float = 600.0) -> str:
        """``flwr run`` the app and stream its logs until the run ends; returns the output."""
        pairs = " ".join(f"{k}={_toml(v)}" for k, v in run_config.items())
        argv = [str(self.bin / "flwr"), "run", str(app_dir), "local-deployment", "--stream"]
        if pairs:
            argv += ["--run-config", pairs]
        proc = subprocess.run(argv, capture_output=True, text=True, env=self._env("cli"), timeout=timeout)
        out = proc.stdout + proc.stderr
        # a failing ServerApp ends the run with a Flower exit code while `flwr run` itself exits 0
        if proc.returncode != 0 or "ref-exit-codes" in out:
            raise RuntimeError(f"flwr run failed ({proc.returncode}):\n{out[-4000:]}\n{self.logs()}")
        return out

    def logs(self, tail: int = 2000) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-tail:]}" for p in sorted(self.workdir.glob("*.log")))

    def stop(self) -> None:
        for proc in reversed(list(self.procs.values())):
            if proc.poll() is None:
                _signal_group(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in _marked(str(self.workdir.resolve())):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


_MARK = "TORCHNATIVE_FLOWER_DEPLOYMENT"


def _marked(workdir: str) -> list[int]:
    """Processes (ours, by their environment) still running from the deployment in ``workdir``."""
    found = []
    needle = f"{_MARK}={workdir}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:  # gone, or not ours to read
                pass
    return found


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:  # the group is already empty
        pass


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return '"' + re.sub(r'(["\\])', r"\\\1", str(v)) + '"'
