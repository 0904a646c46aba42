"""The registry is the one seam: every entry resolves, builds a valid record from its example
and defaults, and its option declarations are what the CLI and the pages check against."""

import importlib
import math
import re
from pathlib import Path

import numpy as np
import pytest

from models import entry, registry
from models.record import AttentionRecord, InputError
from models.registry import MECHANISMS, PAGES, TRAINERS, get_mechanism, mechanism_ids, mechanism_of

ROOT = Path(__file__).resolve().parents[2]


def test_every_builder_batch_builder_and_page_resolves():
    page_files = {p.file for p in PAGES}
    assert len(set(mechanism_ids())) == len(MECHANISMS)
    for m in MECHANISMS:
        assert m.page in page_files and (ROOT / m.page).is_file(), m.id
        assert m.name and m.paper and m.formula and m.summary, m.id
        assert callable(entry._resolve(m.builder)), m.id
        if m.batch_builder:
            assert callable(entry._resolve(m.batch_builder)), m.id
        assert mechanism_of(m.family, m.variant) is m
        assert importlib.util.find_spec(f"models.{m.family}") is not None, m.family
    for p in PAGES:
        assert (ROOT / p.file).is_file()
    with pytest.raises(KeyError, match="known"):
        get_mechanism("nope")


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.id)
def test_every_mechanism_builds_a_valid_record_from_its_example_and_defaults(mechanism):
    options = registry.example_options(mechanism)
    assert all(Path(v).is_file() for k, v in options.items() if k == "image")
    record = mechanism.build(options)
    assert isinstance(record, AttentionRecord) and record.mechanism == mechanism.id
    assert record.weights.dtype == np.float32 and record.weights.size > 0
    assert np.all(np.isfinite(record.weights))
    if mechanism.id == "lm-logit-lens":  # each cell: the probability of the final answer under one layer's lens
        assert np.all((record.weights >= 0) & (record.weights <= 1 + 1e-6))
    elif mechanism.id == "lm-knockout":  # each cell: a change of probability when one head is knocked out
        assert np.all(np.abs(record.weights) <= 1 + 1e-6) and record.axes[:2] == ("layer", "head")
    elif mechanism.id == "corpus":  # one row per head, one column per statistic: means over the texts
        assert record.weights.shape == (len(record.query_labels), len(record.key_labels)) and record.meta["texts"] > 0
        assert record.extras["std"].shape == record.weights.shape and np.all(record.extras["std"] >= 0)
    elif record.meta.get("rows") in ("unnormalised", "signed"):  # sigmoid attention: rows need not sum to 1;
        assert record.meta["rows"] == "signed" or np.all(record.weights >= 0)  # differential: a difference of maps
    elif record.meta.get("attention", True):  # a model without attention records its context vector c instead
        assert np.all(record.weights >= 0)
        rows = record.weights.reshape(-1, record.weights.shape[-1]) if record.weights.ndim > 1 else record.weights[None]
        assert np.all(rows.sum(axis=-1) <= 1 + 1e-4)  # rows are distributions (local windows: at most 1)
    else:
        assert record.axes == ("unit",) and record.meta["output"]
    batch = mechanism.build_many([options, options])
    assert len(batch) == 2 and batch[0].query_labels == record.query_labels
    np.testing.assert_allclose(batch[0].weights, record.weights, atol=2e-5)  # another batch shape, other kernels


def test_options_with_one_name_mean_one_thing_across_mechanisms():
    kinds: dict[str, set[str]] = {}
    for m in MECHANISMS:
        assert m.input in {o.name for o in m.options}, m.id
        for option in m.options:
            assert option.help, (m.id, option.name)
            kinds.setdefault(option.name, set()).add(option.kind)
            if option.kind in ("float", "int") and option.default is not None:
                assert option.low <= option.default <= option.high, (m.id, option.name)
            if option.kind == "choice" and option.default is not None:
                assert option.default in option.choices, (m.id, option.name)
    assert all(len(k) == 1 for k in kinds.values()), kinds
    assert set(registry.all_options()) == set(kinds)


def test_reading_options_checks_every_value_on_the_server():
    hard = get_mechanism("hard")
    read = hard.read({"image": "x.png", "samples": "7", "mode": "argmax"})
    assert read == {"image": "x.png", "temperature": 1.0, "samples": 7, "seed": 0, "mode": "argmax"}
    cases = [
        ({"image": "x.png", "samples": 10**9}, "samples must be a whole number from 0 to 2,000"),
        ({"image": "x.png", "temperature": math.nan}, "temperature must be a number from 0.1 to 5"),
        ({"image": "x.png", "mode": "soft"}, "mode must be one of sample, argmax"),
        ({"image": "x.png", "patch": 8}, "hard does not take --patch; it takes --image, --temperature"),
        ({}, "give the image (--image)"),
    ]
    for raw, message in cases:
        with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
            hard.read(raw)
        assert "\n" not in str(info.value)


def test_every_trainer_has_the_entry_point_protocol():
    for family, (module, help_text) in TRAINERS.items():
        trainer = importlib.import_module(module)
        assert callable(trainer.add_arguments) and callable(trainer.run) and help_text, family
        assert module == f"models.{family}.train"


def test_pages_are_exactly_the_files_in_pages():
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
    assert files == sorted(p.file for p in PAGES)


def test_every_paper_line_begins_with_its_authors_and_year():
    # The pages show it as it is, in both languages: a citation, not a label of ours (those go through
    # the catalog), so it opens with the authors and the year.
    for mechanism in MECHANISMS:
        assert re.match(r"[A-Za-z][\w ,&.'-]* \(\d{4}\)", mechanism.paper), (mechanism.id, mechanism.paper)


# A citation: authors (year), an optional section, an optional title (capitalised, or one of the titles
# written in lower case by their authors), more citations after a semicolon.
LOWER_CASE_TITLES = ("interpreting GPT: the logit lens",)
TITLE_START = "|".join(map(re.escape, LOWER_CASE_TITLES))
CITATION = re.compile(r"[A-Za-z][\w ,&.'-]* \(\d{4}\)(?: §[\d.]+)?(?:, (?:[A-Z0-9]|" + TITLE_START + r")[^;]*)?(?:; .+)?")


def test_a_note_on_the_paper_is_a_message_of_its_own_translated_where_shown():
    # Words of ours after a citation ("with the tanh removed from the score") go in paper_note, through the
    # catalog: in the citation they stayed English on the Chinese pages.
    from viz.i18n_text import catalog

    zh = catalog("zh").gettext
    for mechanism in MECHANISMS:
        assert CITATION.fullmatch(mechanism.paper), (mechanism.id, mechanism.paper)
        assert mechanism.citation() == mechanism.paper + (f", {mechanism.paper_note}" if mechanism.paper_note else "")
        if mechanism.paper_note:
            assert zh(mechanism.paper_note) != mechanism.paper_note, mechanism.id
            assert mechanism.citation(zh) == f"{mechanism.paper}, {zh(mechanism.paper_note)}"
    assert sum(bool(m.paper_note) for m in MECHANISMS) == 3
