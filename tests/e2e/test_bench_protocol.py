"""bench/ui_latency.py reads Streamlit's messages in the browser to see a run end: its reader
(tools/ui_timing.py's FINISHED_INIT), in
Chromium, on real ForwardMsg bytes. A reader that takes another message for script_finished ends a
timing before the run has sent its figure (it did: lengths were added to the wrong offset)."""

import random

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tools.ui_timing import FINISHED_INIT

pytestmark = pytest.mark.e2e


def _message(**fields) -> bytes:
    msg = ForwardMsg(hash="4b2a0c8e1f" * 3)
    msg.metadata.delta_path.extend([0, 1, 2])
    msg.metadata.active_script_hash = "c812da17b9" * 3
    for name, value in fields.items():
        if name == "script_finished":
            msg.script_finished = value
        elif name == "markdown":
            msg.delta.new_element.markdown.body = value
        elif name == "plotly":
            msg.delta.new_element.plotly_chart.spec = value
        elif name == "new_session":
            msg.new_session.name = value
            msg.new_session.main_script_path = "/srv/app.py"
            msg.new_session.page_script_hash = "e3b0c442" * 4
    return msg.SerializeToString()


def test_the_reader_finds_script_finished_and_nothing_else(page):
    page.goto("about:blank")
    page.evaluate(FINISHED_INIT)
    finished = [_message(script_finished=status) for status in range(4)]
    rng = random.Random(12)
    others = [_message(new_session="app"), _message(plotly='{"data": [' + "1.25, " * 400 + "0]}")]
    # Bodies of every length and content: the bytes after a misread length are whatever the text holds.
    others += [_message(markdown="".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(0, 400))))
               for _ in range(300)]
    read = page.evaluate("messages => messages.map(m => window.__scriptFinished(new Uint8Array(m).buffer))",
                         [list(m) for m in finished + others])
    assert read[:4] == [0, 1, 2, 3]
    assert read[4:] == [None] * len(others)
