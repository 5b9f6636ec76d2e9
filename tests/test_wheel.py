"""The wheel, built from a fresh clone, installs beside PyPI's unrelated `envs` package and plays a game.

The repository keeps `envs/`, `training/` and `evaluation/` at its top; the wheel must hold them as
`fowlplay.envs`, `fowlplay.training` and `fowlplay.evaluation` only, so that `pip install fowlplay
envs` leaves both packages whole. Nothing is downloaded: the wheel is built with the setuptools
already installed, and the new virtual environment sees this environment's packages (numpy,
gymnasium, pettingzoo) through a .pth file, after its own.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOP_LEVEL = ("envs", "training", "evaluation")

#: Run inside the new environment: both `envs` packages import, each from its own files, and a game plays.
PLAY = """
import importlib.metadata, sys
import numpy as np
import envs
from fowlplay import envs as fowl_envs
import pettingzoo

site = sys.argv[1]
assert envs.__file__.startswith(site) and callable(envs.env) and hasattr(envs, "Env"), envs.__file__
assert fowl_envs.__file__.startswith(site), fowl_envs.__file__
assert importlib.metadata.version("envs") == "1.4"
env = pettingzoo.make("aec", "fowlplay/chicken_v1", num_players=3)
env.reset(seed=1)
rng = np.random.default_rng(1)
decisions = 0
for agent in env.agent_iter():
    obs, reward, terminated, truncated, info = env.last()
    action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
    decisions += action is not None
    env.step(action)
print(decisions, sum(env.rewards.values()))
"""


def _run(*args, cwd: Path, **kwargs) -> str:
    """Run a command without this checkout on the path; its stdout, or a failure showing its stderr."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_wheel_installs_beside_pypis_envs_package_and_plays_a_game(tmp_path):
    if not (REPO / ".git").exists():
        pytest.skip("needs a git checkout to clone")
    try:
        envs_dist = importlib.metadata.distribution("envs")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("PyPI's `envs` package is not installed (pip install -r requirements-dev.txt)")

    # A fresh clone: only committed files reach the wheel, as on PyPI.
    source = tmp_path / "source"
    _run("git", "clone", "--quiet", REPO, source, cwd=tmp_path)
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "--quiet",
        "--wheel-dir",
        tmp_path / "dist",
        source,
        cwd=tmp_path,
    )
    (wheel,) = (tmp_path / "dist").glob("fowlplay-*.whl")

    # Every file of the three folders is in the wheel under fowlplay/, and nothing is at the top.
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = _run("git", "ls-files", *TOP_LEVEL, cwd=source).split()
    missing = sorted({f"fowlplay/{path}" for path in tracked} - names)
    assert tracked and not missing, f"the wheel lacks {len(missing)} files, e.g. {missing[:3]}"
    tops = {name.split("/")[0] for name in names}
    assert tops == {"fowlplay", wheel.name.split("-py3")[0] + ".dist-info"}, (
        f"top-level names: {sorted(tops)}"
    )

    # A new virtual environment: PyPI's envs (the files pip installed here), then the wheel, side by side.
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(
        _run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=tmp_path).strip()
    )
    (site / "_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    for file in envs_dist.files:
        if file.parts[0] != ".." and "__pycache__" not in file.parts:  # its console script lives elsewhere
            (site / file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file.locate(), site / file)
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--no-deps",
        "--no-index",
        "--quiet",
        wheel,
        cwd=tmp_path,
    )
    assert (site / "envs" / "__init__.py").read_bytes() == Path(
        envs_dist.locate_file("envs/__init__.py")
    ).read_bytes()

    decisions, reward_sum = _run(python, "-c", PLAY, site, cwd=tmp_path).split()
    assert int(decisions) > 0 and float(reward_sum) == pytest.approx(0.0)
