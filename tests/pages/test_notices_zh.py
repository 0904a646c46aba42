"""Model-written notices in the session's language: ui/i18n.py notice_text renders a Notice part by part, and
the HAN and self-attention pages show theirs in Chinese under ?lang=zh (English stays the record's text)."""

import pytest

from models.text import N_, Notice
from models.transformer.alignment import _reading_notices
from models.transformer.records import default_model_dir
from models.transformer.tokenization import load_tokenizer
from tests.pages.test_zh_core_pages import open_zh
from ui.i18n import notice_text
from viz.i18n_text import catalog

zh = catalog("zh").gettext
en = catalog("en").gettext


def test_notice_text_renders_each_part_in_the_language_and_keeps_the_english_text():
    notice = Notice.join([Notice(N_("only the first {kept} of {total} sentences are read"), kept=30, total=41),
                          Notice(N_("sentence {number} was cut to its first {kept} word pieces"), number=2, kept=96)])
    assert notice_text(notice, zh) == "41 个句子中只读取前 30 个；第 2 句已截断，只保留前 96 个词片"
    assert notice_text(notice, en) == str(notice)
    assert notice_text("a plain text", zh) == "a plain text" and notice_text("", zh) == ""


def test_nested_notices_of_a_cut_sentence_pair_render_in_chinese():
    tokenizer = load_tokenizer(default_model_dir(), 8)

    class Runner:  # what _reading_notices reads of a runner
        pass

    runner = Runner()
    runner.tokenizer = tokenizer
    first, second = _reading_notices(runner, "the pasta was cold and the waiter was rude to us", "fine 🍕")
    assert first.startswith("Sentence 1: input was cut to 8 tokens, the model's limit: the text lost")
    assert second == "Sentence 2: 1 part of the text MiniLM's vocabulary cannot spell became [UNK] (one token each, " \
                     "whatever its length): “🍕”."
    shown = notice_text(first, zh)
    assert shown == "第 1 句：输入已截断为 8 个词元，即模型的上限：文本丢失了 11 个词元中的 5 个（“the pasta was cold and " \
                    "the”之后的文本被丢弃）。"  # the quoted text is the user's, as typed
    assert notice_text(second, zh) == "第 2 句：文本中有 1 处 MiniLM 的词表无法拼写，变成了 [UNK]（无论多长，每处一个词元）：“🍕”"
    assert notice_text(first, en) == first


@pytest.fixture(scope="module")
def han_zh():
    at = open_zh("pages/han.py")
    at.text_area(key="han_text").input("The food was great. " + "very " * 70 + "good.").run()
    assert not at.exception, at.exception
    return at


def test_the_han_page_shows_what_was_cut_in_chinese(han_zh):
    shown = [box.value for box in han_zh.info]
    assert "第 2 句有 71 个词；只读取前 60 个" in shown, shown
    assert not [text for text in shown if "words; only its first" in text]
    han_zh.run()  # the record from Streamlit's cache, unpickled
    assert "第 2 句有 71 个词；只读取前 60 个" in [box.value for box in han_zh.info]


def test_the_self_attention_page_shows_unknown_pieces_in_chinese():
    at = open_zh("pages/self_attention.py")
    at.text_area(key="sa_text").input("I love 🍕 pizza.").run()
    assert not at.exception, at.exception
    shown = [box.value for box in at.warning]
    assert any("MiniLM 的词表无法拼写" in text and "🍕" in text for text in shown), shown
    assert not [text for text in shown if "vocabulary cannot spell" in text]


@pytest.mark.parametrize("cell, english, chinese", [
    (None, "row 1: column k1 needs a number", "第 1 行：k1 列需要一个数字"),
    (1e6, "keys entries must lie within ±", "键的条目必须在 ±"),
], ids=["empty cell", "too large"])
def test_a_bad_table_cell_is_said_in_the_sessions_language(cell, english, chinese):
    # An InputError whose message is a Notice (models/playground/records.py) is shown part by part in
    # the session's language (ui.widgets.show_input_error); its English text, which the CLI prints, stays.
    import json

    from tests.pages.conftest import open_page, send_widget_value

    edit = json.dumps({"edited_rows": {"0": {"k1": cell}}})
    for at, expected in ((open_page("pages/playground.py"), english), (open_zh("pages/playground.py"), chinese)):
        send_widget_value(at, "kv_table", edit)
        assert not at.exception, at.exception
        shown = [e.value for e in at.error]
        assert len(shown) == 1 and expected in shown[0], shown


def test_a_model_folder_refused_on_the_language_model_page_is_said_in_chinese(tmp_path, monkeypatch):
    # models/model_folders.py's refusals are Notices: the Chinese page says them in Chinese.
    import shutil

    from models.lm.quality import CHECKPOINT_DIR

    (tmp_path / "pickled").mkdir()
    shutil.copy(CHECKPOINT_DIR / "config.json", tmp_path / "pickled" / "config.json")  # a GPT-2 config, no safetensors
    (tmp_path / "pickled" / "pytorch_model.bin").write_bytes(b"not read")
    monkeypatch.setenv("ATTENTION_LAB_MODEL_ROOT", str(tmp_path))
    at = open_zh("pages/language_model.py")
    for folder, expected in (("../../etc", "这里无法使用该模型文件夹"), ("pickled", "pickle 文件会被拒绝")):
        at.text_input(key="lm_model_dir").set_value(folder).run()
        assert not at.exception, at.exception
        shown = [e.value for e in at.error]
        assert len(shown) == 1 and expected in shown[0], shown


def test_a_token_outside_the_induction_vocabulary_is_a_notice():
    from models.induction.task import encode_text
    from models.record import InputError

    with pytest.raises(InputError) as caught:
        encode_text("k 猫 dog")
    message = caught.value.args[0]
    assert isinstance(message, Notice) and message.startswith("not in the vocabulary: '猫'; use the letters a–z")
    assert notice_text(message, zh).startswith("不在词表中：'猫'；请使用字母 a–z 和单词 cat, dog")


def test_the_induction_page_says_what_is_not_in_the_vocabulary_in_chinese():
    at = open_zh("pages/induction.py")
    at.text_input(key="ind_text").input("k 猫 dog").run()
    assert not at.exception, at.exception
    shown = [box.value for box in at.error]
    assert any(text.startswith("不在词表中：") for text in shown), shown
    assert not [text for text in shown if "not in the vocabulary" in text]
