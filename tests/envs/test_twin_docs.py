"""docs/batched.md: its example runs as written, and the twins stay optional (without JAX nothing of
`fowlplay.envs` changes, and `make_jax` says which extra to install)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "batched.md"


def run_python(code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter from the repository root."""
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )


def example() -> str:
    """The first Python block of docs/batched.md (the ten-line example)."""
    block = re.search(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert block, "docs/batched.md has no ```python block"
    return block.group(1)


def test_the_example_is_ten_lines_or_so():
    lines = [line for line in example().splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(lines) <= 12, lines


def test_the_example_runs_as_written():
    pytest.importorskip("jax")
    done = run_python(example())
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"It prints `{done.stdout.strip()}`" in DOC.read_text()  # what the page says it prints


#: A meta-path finder that makes `import jax` (and jaxlib) fail as it does where JAX is not installed.
NO_JAX = textwrap.dedent(
    """
    import sys

    class NoJax:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("jax", "jaxlib"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoJax())
    """
)


def test_without_jax_the_envs_work_and_make_jax_names_the_extra():
    done = run_python(
        NO_JAX
        + textwrap.dedent(
            """
            from fowlplay import envs

            for name in envs.ENV_NAMES:
                env = envs.make(name)
                env.reset(seed=0)
                env.step(int(env.observe(env.agent_selection)["action_mask"].nonzero()[0][0]))
            try:
                envs.make_jax("chicken_v1")
            except ImportError as error:
                print("ImportError:", error)
            else:
                raise SystemExit("make_jax worked without jax")
            """
        )
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "pip install 'fowlplay[jax]'" in done.stdout


def test_importing_the_envs_never_imports_jax():
    done = run_python(
        "import sys\nfrom fowlplay import envs\n"
        "for name in envs.ENV_NAMES:\n    envs.make(name).reset(seed=0)\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib')], 'jax imported'\n"
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_make_jax_still_refuses_bad_options_first_without_jax():
    """The ValueError of a bad option comes before the missing extra: the same message as `make`."""
    done = run_python(
        NO_JAX + "from fowlplay import envs\ntry:\n    envs.make_jax('chicken_v1', num_players=9)\n"
        "except ValueError as error:\n    print('ValueError:', error)\n"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ValueError: chicken_v1 supports 2-4 players" in done.stdout
