"""pyproject.toml lists every package under app/, so `pip install .` ships all of them."""

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_under_app_is_listed_in_pyproject():
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(init.parent.relative_to(ROOT / "app").parts)
        for init in (ROOT / "app").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
