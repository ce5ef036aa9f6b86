"""The fake OpenAI-compatible server in a child process, started without importing ragqa here.

A benchmark whose own process only starts other processes (the runs it measures are children)
uses :func:`fake_server`: it is :func:`ragqa.testing.server.fake_openai_server_process`, loaded from
the installed package's ``testing/launch.py`` by file (that module imports only the standard
library), because importing it through ``ragqa.testing`` would cost this process about 1.3 CPU
seconds (ragqa, aiohttp and the local judge's rules) for nothing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def _launch_module() -> ModuleType:
    """``ragqa/testing/launch.py`` of the ragqa this Python imports, loaded without running ``ragqa/__init__``."""
    package = importlib.util.find_spec("ragqa")  # finds the package; does not import it
    if package is None or not package.submodule_search_locations:
        raise ModuleNotFoundError("ragqa is not installed in this Python: pip install -e .")
    path = Path(next(iter(package.submodule_search_locations))) / "testing" / "launch.py"
    spec = importlib.util.spec_from_file_location("_ragqa_testing_launch", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fake_server = _launch_module().fake_openai_server_process
"""Run ``python -m ragqa.testing.server`` until the block ends; yields its base URL (see the module docstring)."""
