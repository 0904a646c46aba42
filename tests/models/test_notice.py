"""Notice (models/text.py): a str that is its English text and carries its parts for translation; and every
notice template that models/ writes is in the zh catalog with the same placeholders."""

import ast
import copy
import pickle
import string
from pathlib import Path

import pytest

from models.options import cut_text
from models.text import N_, Notice
from viz.i18n_text import catalog

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_a_notice_is_its_english_text():
    notice = Notice(N_("only the first {kept} of {total:,} sentences are read"), kept=30, total=4100)
    assert notice == "only the first 30 of 4,100 sentences are read"
    assert isinstance(notice, str) and hash(notice) == hash(str(notice))
    assert notice.parts == (("only the first {kept} of {total:,} sentences are read", {"kept": 30, "total": 4100}),)


def test_a_join_holds_every_part_and_the_joined_english_text():
    first, second = cut_text("x" * 30, 20)[1], Notice(N_("the prompt was cut to its last {kept} of {total} tokens"),
                                                      kept=5, total=9)
    joined = Notice.join([first, None, second, "a plain {text}"])
    assert joined == f"{first}; {second}; a plain {{text}}" == "; ".join([first, second, "a plain {text}"])
    assert [t for t, _v in joined.parts] == [first.parts[0][0], second.parts[0][0], "a plain {{text}}"]
    assert Notice.join([None, ""]) is None
    again = Notice.join([joined, second])  # a join of joins keeps a flat list of parts
    assert len(again.parts) == 4
    sentences = Notice.join([first, second], " ")
    nested = Notice.join([sentences, second])  # another separator: kept whole, as one part
    assert nested == f"{sentences}; {second}" and nested.parts[0] == ("{notice}", {"notice": sentences})
    assert set(nested.templates()) == {"{notice}", first.parts[0][0], second.parts[0][0]}


def test_restyled_changes_the_english_text_only():
    notice = cut_text("x" * 30, 20)[1]
    shown = notice.restyled(notice.capitalize() + ".")
    assert shown == "The text was cut to its first 20 of 30 characters." and shown.parts == notice.parts


@pytest.mark.parametrize("clone", [lambda n: pickle.loads(pickle.dumps(n)), copy.copy, copy.deepcopy],
                         ids=["pickle", "copy", "deepcopy"])
def test_a_notice_survives_pickle_and_copy(clone):
    inner = Notice(N_("the text lost {lost} of {total} tokens (all of it was dropped)"), lost=3, total=3)
    notice = Notice.join([Notice(N_("Input was cut to {limit} tokens, the model's limit: {losses}."), limit=512,
                                 losses=Notice.join([inner])), "plain"], " ")
    back = clone({"notice": notice})["notice"]
    assert type(back) is Notice and back == notice
    assert back.parts == notice.parts and back.separator == " " and back.templates() == notice.templates()


def _notice_templates() -> set[str]:
    # Every N_("…") literal of a models/ module that builds a Notice; and no Notice(...) of an unmarked text.
    found, unmarked = set(), []
    for path in sorted(MODELS.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if "Notice(" not in source:
            continue
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            if node.func.id == "N_" and node.args and isinstance(node.args[0], ast.Constant):
                found.add(node.args[0].value)
            elif node.func.id == "Notice" and node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr,
                                                                                     ast.BinOp)):
                unmarked.append(f"{path.relative_to(MODELS)}:{node.lineno}")
    assert not unmarked, f"Notice templates not marked with N_: {unmarked}"
    return found


def _placeholders(text: str) -> list[tuple[str, str]]:
    return sorted((name, spec or "") for _lit, name, spec, _conv in string.Formatter().parse(text) if name is not None)


def test_every_notice_template_of_models_is_translated_with_the_same_placeholders():
    templates = _notice_templates()
    assert {"sentence {number} was cut to its first {kept} word pieces", "Sentence {number}: {notice}"} <= templates
    zh = catalog("zh")
    missing = [t for t in templates if not zh.gettext(t) or zh.gettext(t) == t]
    assert missing == []
    assert [t for t in templates if _placeholders(zh.gettext(t)) != _placeholders(t)] == []


def test_the_placeholder_check_can_fail():
    assert _placeholders("cut {kept:,} of {total}") != _placeholders("截断 {total} 中的 {kept}")


def test_the_familiarity_notice_is_a_notice_of_its_numbers():
    from models.lm.quality import familiarity_notice

    assert familiarity_notice(None, 20.0) is None and familiarity_notice(3.0, 20.0) is None  # ln 20 + 1.5 ≈ 4.5
    far = familiarity_notice(6.0, 20.0)
    assert far.startswith("This text lies outside what the model knows: 6.0 nats per token, against 3.0 on held-out")
    assert far.parts[0][1] == {"loss": 6.0, "heldout": pytest.approx(2.9957, abs=1e-4)}
