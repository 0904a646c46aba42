"""Garbage collection stays cheap: Streamlit's full collection after every run is off, and the app
freezes its long-lived objects so that Python's own full collections walk only what sessions made
since (ui/heap.py)."""

import gc
import subprocess
import sys
import tomllib
import weakref

from tests.pages.conftest import ROOT, open_page
from ui.heap import freeze_long_lived


class _Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cycle collector frees it


def test_each_stage_freezes_once_and_later_garbage_is_still_collected():
    first = freeze_long_lived("test: first")
    assert first > 0
    kept = [_Node() for _ in range(100)]
    before = gc.get_freeze_count()  # frozen objects that die leave the count, so it can only fall
    assert freeze_long_lived("test: first") == first  # the same stage again: nothing frozen
    assert gc.get_freeze_count() <= before
    assert freeze_long_lived("test: second") >= before + len(kept)  # a new stage freezes what lives now

    made_after = _Node()
    alive = weakref.ref(made_after)
    del made_after
    gc.collect(2)
    assert alive() is None, "a cycle made after the freeze must still be collected"


def test_after_a_pages_first_run_a_full_collection_walks_a_small_part_of_the_heap():
    freeze_long_lived.clear()
    gc.unfreeze()
    open_page("pages/self_attention.py", timeout=300)
    frozen = gc.get_freeze_count()
    walked = len(gc.get_objects())  # what gc.collect(2) still walks: the objects not frozen
    assert frozen > 100_000, frozen  # jax, flax, plotly, streamlit and the loaded model
    assert walked < frozen / 5, (walked, frozen)


def test_app_imports_pandas_before_any_page_builds_a_figure():
    # plotly's validators read sys.modules["pandas"] without importing it; a lazy first import in
    # one session's thread handed another session a partially initialised module. In a fresh
    # interpreter: nothing has imported pandas before app.py runs, and app.py's run has.
    code = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        "at = AppTest.from_file(sys.argv[1], default_timeout=300)\n"
        "before = 'pandas' in sys.modules\n"
        "at.run()\n"
        "print(before, 'pandas' in sys.modules, bool(at.exception))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "app.py")], capture_output=True, text=True,
                         timeout=600, cwd=ROOT, check=True).stdout.split()[-3:]
    assert out == ["False", "True", "False"], out


def test_the_shipped_config_turns_off_streamlits_full_collection_after_every_run(tmp_path):
    shipped = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert shipped["runner"]["postScriptGC"] is False
    # Streamlit reads it under that name (a renamed option would be ignored): started in the project
    # it is off, started in a folder without the project's config it is Streamlit's default, on.
    read = "from streamlit import config; print(config.get_option('runner.postScriptGC'))"
    as_read = {folder: subprocess.run([sys.executable, "-c", read], capture_output=True, text=True, timeout=120,
                                      cwd=folder, check=True).stdout.split()[-1]
               for folder in (ROOT, tmp_path)}
    assert as_read == {ROOT: "False", tmp_path: "True"}, as_read
