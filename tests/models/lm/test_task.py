"""The language model's data: reST cleaned to prose, a split fixed by page names, the token stream
and its windows, and the byte-level BPE's round trip (the committed tokenizer and a fresh one)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from models.lm import quality, task
from models.lm.tokenizer import EOT_ID, encode_plain, train_tokenizer

PAGE = """\
.. _tut-loops:

*************
Looping Tools
*************

The :keyword:`for` statement iterates over the items of any sequence, see :ref:`tut-loops`
and :pep:`412`.  Use :func:`~itertools.chain` and ``range()``, as
`the docs <https://docs.python.org>`_ say.  For example::

   for i in range(3):
       print(i)

After the code.

>>> 1 + 1
2

.. index:: single: loops

.. note::
   Lists are *mutable*, **strings** are not.

.. versionadded:: 3.2
   The ``step`` argument.

* first item
* second item
  continues here

.. code-block:: python

   x = 1

=====  =====
a      b
=====  =====
"""


def test_clean_rst_keeps_prose_and_drops_code_and_markup():
    lines = task.clean_rst(PAGE, task.section_labels(PAGE)).split("\n")
    assert lines == [
        "Looping Tools",
        "The for statement iterates over the items of any sequence, see Looping Tools and PEP 412. Use chain and "
        "range(), as the docs say. For example:",
        "After the code.",
        "Lists are mutable, strings are not.",
        "New in version 3.2. The step argument.",
        "* first item",
        "* second item continues here",
        "a b",  # a simple table keeps its cells' words, its borders go
    ]


def test_split_is_a_function_of_the_page_name_alone():
    names = [f"library/module{i}" for i in range(3000)]
    splits = [task.split_of(n) for n in names]
    assert splits == [task.split_of(n) for n in names]
    share = splits.count("heldout") / len(names)
    assert abs(share - task.HELDOUT_PERCENT / 100) < 0.02
    for name in ("library/argparse", "tutorial/classes", "library/functools"):  # the rule itself, spelled out
        digest = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
        assert task.split_of(name) == ("heldout" if digest % 100 < task.HELDOUT_PERCENT else "train")
    docs = [task.Document(n, "x") for n in names[:50]]
    parts = task.split_documents(docs)
    assert sorted(d.name for d in parts["train"] + parts["heldout"]) == sorted(names[:50])


def test_load_documents_reads_a_sources_folder_sorted_by_path(tmp_path):
    (tmp_path / "tutorial").mkdir()
    (tmp_path / "tutorial" / "b.rst.txt").write_text("Title\n=====\n\nSome prose here.\n")
    (tmp_path / "a.rst.txt").write_text(".. toctree::\n   b\n\nAn index page.\n")
    (tmp_path / "empty.rst.txt").write_text(".. index:: nothing\n")
    docs = task.load_documents(tmp_path)
    assert [(d.name, d.text) for d in docs] == [("a", "An index page."), ("tutorial/b", "Title\nSome prose here.")]


def test_a_missing_package_is_one_line_naming_it(tmp_path):
    with pytest.raises(SystemExit, match="apt-get install -y python3-doc"):
        task.find_sources(str(tmp_path / "nowhere" / "_sources"))


def test_stream_and_windows():
    stream = task.token_stream([[5, 6, 7], [8, 9]], eot=0)
    assert stream.tolist() == [0, 5, 6, 7, 0, 8, 9, 0]
    rng = np.random.default_rng(0)
    windows = task.sample_windows(rng, np.arange(100, 200, dtype=np.int32), 8, 6, bos=0)
    assert windows.shape == (8, 6) and (windows[:, 0] == 0).all()
    assert (np.diff(windows[:, 1:], axis=1) == 1).all()  # consecutive stream tokens after BOS
    again = task.sample_windows(np.random.default_rng(0), np.arange(100, 200, dtype=np.int32), 8, 6, bos=0)
    np.testing.assert_array_equal(windows, again)
    evals = task.eval_windows(np.arange(1, 12, dtype=np.int32), 4, bos=0)
    assert evals.tolist() == [[0, 1, 2, 3], [0, 4, 5, 6], [0, 7, 8, 9]]


@pytest.fixture(scope="module")
def sample_texts():
    return quality.load_sample()["texts"]


def test_a_fresh_tokenizer_is_deterministic_and_round_trips(sample_texts):
    first, second = (train_tokenizer(sample_texts, 600) for _ in range(2))
    assert first.to_str() == second.to_str()
    assert first.token_to_id(task.EOT) == EOT_ID and first.get_vocab_size() == 600
    text = "The café's naïve résumé — 3 × 4 ≠ 汉字 🙂\n\ttabs"
    encoding = first.encode(text)
    assert encoding.ids[0] == EOT_ID and EOT_ID not in encoding.ids[1:]
    assert first.decode(encoding.ids) == text
    assert encode_plain(first, [text])[0] == encoding.ids[1:]


def test_the_committed_tokenizer_round_trips_every_sample_page(sample_texts):
    from models.lm.loader import load_tokenizer

    tokenizer = load_tokenizer(quality.CHECKPOINT_DIR)
    assert tokenizer.token_to_id(task.EOT) == EOT_ID
    for text in sample_texts:
        ids = tokenizer.encode(text).ids
        assert ids[0] == EOT_ID and tokenizer.decode(ids) == text
