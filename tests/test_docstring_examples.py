"""The Examples sections in kgqa_core's docstrings run and hold (networkx-style Parameters/Returns/Examples)."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import kgqa_core


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(kgqa_core.__path__, "kgqa_core."):
        spec = importlib.util.find_spec(info.name)
        if spec and spec.origin and spec.origin.endswith(".py"):
            with open(spec.origin, encoding="utf-8") as fh:
                if ">>> " in fh.read():
                    names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, f"{name}: {result.failed} of {result.attempted} failed"
