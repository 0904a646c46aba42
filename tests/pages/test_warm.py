"""Warming a page's variants ahead: models.registry.warm builds each of them once, and
ui.widgets.warm_in_background runs it in one thread per process and page."""

import pytest

from models import entry, registry
from models.registry import PLAYGROUND, SEQ2SEQ, mechanisms_on_page
from models.seq2seq.records import stored_decoder, variant_weights
from ui import widgets


def test_warm_builds_every_variant_of_a_page_and_loads_its_decoder():
    ids = [m.id for m in mechanisms_on_page(SEQ2SEQ.file)]
    assert len(ids) > 1
    assert registry.warm(SEQ2SEQ.file) == ids
    for mechanism in mechanisms_on_page(SEQ2SEQ.file):
        decoder = stored_decoder(variant_weights(mechanism.variant)[0])
        assert decoder._function is not None or decoder._loaded, mechanism.id  # compiled or loaded


def test_warm_skips_a_variant_that_fails(monkeypatch):
    ids = [m.id for m in mechanisms_on_page(PLAYGROUND.file)]
    real_build = entry.Mechanism.build

    def build(self, raw):
        if self.id == ids[1]:
            raise RuntimeError("broken checkpoint")
        return real_build(self, raw)

    monkeypatch.setattr(entry.Mechanism, "build", build)
    assert registry.warm(PLAYGROUND.file) == ids[:1] + ids[2:]


@pytest.mark.parametrize("setting", ["0", "off"])
def test_warm_in_background_can_be_turned_off(monkeypatch, setting):
    monkeypatch.setenv(widgets.WARM_ENV, setting)
    widgets.warm_in_background.clear()
    assert widgets.warm_in_background(PLAYGROUND.file) is None
    widgets.warm_in_background.clear()


def test_warm_in_background_starts_one_thread_per_page(monkeypatch):
    monkeypatch.setenv(widgets.WARM_ENV, "1")
    calls = []
    monkeypatch.setattr(widgets, "warm", calls.append)
    widgets.warm_in_background.clear()
    try:
        thread = widgets.warm_in_background(PLAYGROUND.file)
        assert thread is not None and thread.daemon
        thread.join(timeout=60)
        assert not thread.is_alive()
        assert widgets.warm_in_background(PLAYGROUND.file) is thread  # once per process
        other = widgets.warm_in_background(SEQ2SEQ.file)
        assert other is not thread
        other.join(timeout=60)
        assert calls == [PLAYGROUND.file, SEQ2SEQ.file]
    finally:
        widgets.warm_in_background.clear()
