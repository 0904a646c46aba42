"""bench/ui_latency.py loaded as a module, for the tests of its reader and its report (it is a script, not a package)."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_ui_latency():
    spec = importlib.util.spec_from_file_location("ui_latency", ROOT / "bench" / "ui_latency.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ui_latency", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module
