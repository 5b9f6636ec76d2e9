"""Metadata lives in setup.cfg; this file only lists the packages under the `fowlplay` namespace.

The repository keeps `envs/`, `training/` and `evaluation/` at the top; setup.cfg's `package_dir`
installs them as `fowlplay.envs`, `fowlplay.training` and `fowlplay.evaluation`, and the list of
their subpackages is found here so that a new subpackage is never left out of the wheel.
"""

from setuptools import find_packages, setup

TOP_LEVEL = ("envs", "training", "evaluation")

setup(
    packages=[
        f"fowlplay.{name}" for name in find_packages(include=[*TOP_LEVEL, *(f"{top}.*" for top in TOP_LEVEL)])
    ]
)
