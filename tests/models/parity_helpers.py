"""The fixture folders of the Hugging Face parity tests (tests/fixtures/<family>/<name>/, each with the folder
save_pretrained left and transformers' outputs in reference.npz), shared by the families' test_parity.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

FIXTURE_ROOT = Path(__file__).resolve().parents[1] / "fixtures"


def fixture_names(family: str) -> tuple[Path, list[str]]:
    """Returns (the family's fixture folder, the sorted names of the models under it)."""
    folder = FIXTURE_ROOT / family
    return folder, sorted(p.name for p in folder.iterdir() if p.is_dir())


def reference_case(family: str, load: Callable[[Path], Any]):
    """Returns a module-scoped pytest fixture over the family's models: (load(folder), its reference.npz)."""
    folder, names = fixture_names(family)

    @pytest.fixture(scope="module", params=names)
    def case(request):
        return load(folder / request.param), np.load(folder / request.param / "reference.npz")

    return case
