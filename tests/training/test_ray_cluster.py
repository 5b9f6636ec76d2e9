"""A two-node Ray cluster on loopback, with token authentication: `trainer: rllib` joins it by address,
its env runners play on the second node, and `fowlplay-eval` scores the checkpoint. A wrong address,
a missing token and a node without fowlplay each end in one line.

Both nodes run on this machine, bound to loopback addresses of their own (127.0.0.2 and 127.0.0.3:
Ray turns 127.0.0.1 into the machine's outward address, so it cannot be used). Every Ray process the
test starts is found by its session folder and killed by pid at the end, pass or fail.
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
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("ray.rllib", reason="trainer: rllib needs Ray RLlib: pip install 'fowlplay[rllib]'")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
HEAD_IP, WORKER_IP, BROKEN_IP = "127.0.0.2", "127.0.0.3", "127.0.0.4"
#: The custom resource that places env runners on the worker node only.
GAME_NODE = "game_node"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackCluster:
    """A Ray head and worker nodes started with `ray start`, and every process they made."""

    def __init__(self) -> None:
        # Short paths: Ray's unix sockets live under the temp dir and must fit in 107 bytes.
        self.root = Path(tempfile.mkdtemp(prefix="fpray", dir="/tmp"))
        self.home = self.root / "home"
        self.home.mkdir()
        self.temp = self.root / "t"
        self.port = free_port()
        self.address = f"{HEAD_IP}:{self.port}"
        #: Token authentication as Ray sets it up: a generated token in ~/.ray/auth_token and
        #: RAY_AUTH_MODE=token on every node and client.
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "RAY_AUTH_MODE": "token",
            "RAY_USAGE_STATS_ENABLED": "0",
            "PYTHONUNBUFFERED": "1",
        }
        for key in ("RAY_ADDRESS", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
            self.env.pop(key, None)

    def ray(self, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(BIN / "ray"), *args], env=env or self.env, capture_output=True, text=True, timeout=timeout
        )

    def start(self) -> None:
        token = self.ray("get-auth-token", "--generate")
        assert token.returncode == 0, token.stderr
        assert (self.home / ".ray" / "auth_token").is_file()
        head = self.ray(
            "start", "--head", f"--node-ip-address={HEAD_IP}", f"--port={self.port}", "--num-cpus=1",
            "--include-dashboard=false", f"--ray-client-server-port={free_port()}",
            f"--temp-dir={self.temp}", "--disable-usage-stats",
        )  # fmt: skip
        assert head.returncode == 0, head.stdout + head.stderr
        self.add_node(WORKER_IP, cpus=2, resources={GAME_NODE: 2})

    def add_node(self, ip: str, cpus: int, resources: dict, env: dict | None = None) -> None:
        node = self.ray(
            "start", f"--address={self.address}", f"--node-ip-address={ip}", f"--num-cpus={cpus}",
            f"--resources={json.dumps(resources)}", "--disable-usage-stats", env=env,
        )  # fmt: skip
        assert node.returncode == 0, node.stdout + node.stderr

    def nodes(self) -> list[tuple[str, bool, dict]]:
        """Ray's own node list, read by a driver that joins with the token."""
        code = (
            "import json, ray\n"
            f"ray.init(address={self.address!r}, logging_level='ERROR', log_to_driver=False)\n"
            "print(json.dumps([(n['NodeManagerAddress'], n['Alive'], n['Resources']) for n in ray.nodes()]))\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], env=self.env, capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
        return [tuple(node) for node in json.loads(out.stdout.strip().splitlines()[-1])]

    def pids(self) -> list[int]:
        """Every live process whose command line names this cluster's temp folder or session."""
        mine = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if str(self.temp) in command or str(self.home).encode() in environ:
                mine.append(int(entry.name))
        return [pid for pid in mine if pid != os.getpid()]

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.pids():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + 10
            while self.pids() and time.monotonic() < deadline:
                time.sleep(0.2)
        shutil.rmtree(self.root, ignore_errors=True)


def fowlplay(module: str, *args: str, env: dict, timeout: float = 480) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


TINY = [
    "--set", "trainer=rllib",
    "--n-envs", "2",
    "--set", "ppo.n_steps=32",
    "--set", "ppo.batch_size=64",
    "--set", "ppo.n_epochs=1",
    "--set", "ppo.net_arch=[16]",
    "--set", "rllib.envs_per_env_runner=2",
    "--set", "eval_every=0",
    "--set", "checkpoint_every=0",
    "--set", "tensorboard=false",
    "--no-progress",
]  # fmt: skip


def _one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def test_a_two_node_loopback_cluster_trains_evaluates_and_names_each_failure(tmp_path):
    # One test, one cluster: pytest-xdist may hand the tests of a module to different workers.
    cluster = LoopbackCluster()
    try:
        cluster.start()
        _the_nodes_use_loopback_addresses_only(cluster)
        _a_run_joins_by_address_plays_on_the_second_node_and_is_evaluated(cluster, tmp_path / "ok")
        _a_client_without_the_token_gets_one_line(cluster, tmp_path / "token")
        _a_wrong_address_gets_one_line(cluster, tmp_path / "address")
        _a_node_without_fowlplay_is_named_in_one_line(cluster, tmp_path / "missing")
    finally:
        cluster.stop()
    assert not cluster.pids(), "Ray processes of the test were left behind"


def _the_nodes_use_loopback_addresses_only(cluster):
    nodes = cluster.nodes()
    assert sorted(ip for ip, alive, _ in nodes if alive) == [HEAD_IP, WORKER_IP]
    resources = {ip: res for ip, _, res in nodes}
    assert resources[WORKER_IP].get(GAME_NODE) == 2 and GAME_NODE not in resources[HEAD_IP]


def _a_run_joins_by_address_plays_on_the_second_node_and_is_evaluated(cluster, tmp_path):
    out = tmp_path / "run"
    result = fowlplay(
        "fowlplay.training.cli", "--config", str(ROOT / "configs" / "chicken_v1.yaml"), "--out", str(out),
        "--total-timesteps", "128", *TINY, "--address", cluster.address,
        "--set", "rllib.num_env_runners=1", "--set", f"rllib.env_runner_resources={{{GAME_NODE}: 1}}",
        env=cluster.env,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"env runners on node(s) {WORKER_IP}" in result.stdout
    metadata = json.loads((out / "final.json").read_text())
    assert metadata["trainer"] == "rllib" and metadata["timesteps"] >= 128
    # Where Ray placed the env runner, as Ray reports it inside the runner: the worker node, the
    # only one with the resource it asked for.
    assert metadata["env_runner_nodes"] == [WORKER_IP]
    evaluation = fowlplay(
        "fowlplay.evaluation.cli", "--game", "chicken_v1", "--agents", f"t=ckpt:{out}", "random",
        "--matches", "2", "--out", str(tmp_path / "eval"), "--no-progress", env=cluster.env, timeout=300,
    )  # fmt: skip
    assert evaluation.returncode == 0, evaluation.stderr
    assert "illegal actions: 0" in evaluation.stdout


def _train(tmp_path, address: str, env: dict) -> subprocess.CompletedProcess:
    return fowlplay(
        "fowlplay.training.cli", "--config", str(ROOT / "configs" / "chicken_v1.yaml"),
        "--out", str(tmp_path / "run"), "--total-timesteps", "64", *TINY, "--address", address, env=env,
        timeout=300,
    )  # fmt: skip


def _a_client_without_the_token_gets_one_line(cluster, tmp_path):
    home = tmp_path / "home"
    home.mkdir(parents=True)
    line = _one_line_error(_train(tmp_path, cluster.address, {**cluster.env, "HOME": str(home)}))
    assert "authentication token" in line and "RAY_AUTH_MODE=token" in line


def _a_wrong_address_gets_one_line(cluster, tmp_path):
    wrong = f"{HEAD_IP}:{free_port()}"
    line = _one_line_error(_train(tmp_path, wrong, cluster.env))
    assert f"cannot join a Ray cluster at {wrong}" in line


def _a_node_without_fowlplay_is_named_in_one_line(cluster, tmp_path):
    # A node whose Python cannot import fowlplay: a package of that name that fails to import comes
    # first on its workers' path, as on a machine where fowlplay was never installed.
    shadow = cluster.root / "shadow" / "fowlplay"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'fowlplay'\")\n")
    cluster.add_node(BROKEN_IP, cpus=1, resources={}, env={**cluster.env, "PYTHONPATH": str(shadow.parent)})
    line = _one_line_error(_train(tmp_path, cluster.address, cluster.env))
    assert f"{BROKEN_IP}: ModuleNotFoundError" in line and "install the same fowlplay" in line
    assert f"{HEAD_IP}:" not in line.split("(", 1)[1] and f"{WORKER_IP}:" not in line
