"""Writes tests/fixtures/encoders/<family>/: a tiny random encoder folder per family and transformers' outputs on it.

Families: RoBERTa, XLM-RoBERTa, DistilBERT, ELECTRA (discriminator) and ModernBERT. Each folder holds what
save_pretrained writes (config.json, model.safetensors, tokenizer.json, tokenizer_config.json), saved from the
class people download (…ForMaskedLM, ElectraForPreTraining: prefixed names and a head the loader must skip),
plus reference.npz with, per case NAME: NAME/text, NAME/text_pair ("" = none), NAME/input_ids (int32 [T],
AutoTokenizer's ids), NAME/token_type_ids (int32 [T], where the model reads them), NAME/attention (float32 [L, H, T, T], eager, output_attentions=True) and
NAME/last_hidden (float32 [T, D]). tests/models/transformer/test_encoder_parity.py reads them without torch.

The tokenizers are trained here on a small corpus with the `tokenizers` library (byte-level BPE for RoBERTa
and ModernBERT, Unigram for XLM-R, WordPiece for DistilBERT and ELECTRA) and wrapped in each family's
transformers class, so tokenizer.json is the one transformers itself writes. Weights are drawn at a larger
scale than transformers' initialisation, so the maps are far from uniform. Run it in the benchmark venv:

    .bench-venv/bin/python tools/make_encoder_fixtures.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "encoders"

ENGLISH = "Well, the quick brown fox didn't jump over the lazy dog; it sat (quietly) and waited!"
PAIR = ("The cat sat on the mat.", "A dog slept on the rug by the door.")
CHINESE = "我爱自然语言处理。今天天气很好！"
LONG = (
    "Attention lets a model decide, for every word it reads, which other words matter most: some heads "
    "look at the next token and some rest on the separators."
)
CORPUS = [
    ENGLISH,
    *PAIR,
    CHINESE,
    LONG,
    "The quick brown fox jumps over the lazy dog.",
    "天气很好，我们去公园。",
    "Researchers argued about whether attention weights explain a model's decisions.",
    "Heads that track syntax link a verb to its subject, while others look at the previous word.",
] * 3

# family -> the cases written (name -> (text, text_pair or None))
CASES = {
    "roberta": {"english": (ENGLISH, None), "pair": PAIR},
    "xlm_roberta": {"english": (ENGLISH, None), "chinese": (CHINESE, None), "pair": (PAIR[0], CHINESE)},
    "distilbert": {"english": (ENGLISH, None), "pair": PAIR},
    "electra": {"english": (ENGLISH, None), "pair": PAIR},
    "modernbert": {"long": (LONG, None), "pair": PAIR},
}
SMALL = {"hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 48, "max_position_embeddings": 80}
# RoBERTa and XLM-RoBERTa: <s>=0, <pad>=1, </s>=2, one token type, positions offset by the padding index + 1.
ROBERTA_SHAPE = dict(
    SMALL,
    num_hidden_layers=2,
    type_vocab_size=1,
    pad_token_id=1,
    bos_token_id=0,
    eos_token_id=2,
    max_position_embeddings=82,
)


def byte_bpe(specials: list[str], vocab_size: int = 360):
    from tokenizers import ByteLevelBPETokenizer

    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(CORPUS, vocab_size=vocab_size, min_frequency=1, special_tokens=specials)
    return tok


def roberta_tokenizer():
    from transformers import RobertaTokenizer

    with tempfile.TemporaryDirectory() as tmp:
        byte_bpe(["<s>", "<pad>", "</s>", "<unk>", "<mask>"]).save_model(tmp)
        vocab = json.loads(Path(tmp, "vocab.json").read_text())
        merges = [tuple(line.split(" ")) for line in Path(tmp, "merges.txt").read_text().splitlines()[1:] if line]
    return RobertaTokenizer(vocab=vocab, merges=merges)


def xlm_roberta_tokenizer():
    from tokenizers import SentencePieceUnigramTokenizer
    from transformers import XLMRobertaTokenizer

    tok = SentencePieceUnigramTokenizer()
    tok.train_from_iterator(CORPUS, vocab_size=220, special_tokens=["<unk>"], unk_token="<unk>")
    pieces = [(p, s) for p, s in json.loads(tok.to_str())["model"]["vocab"] if p != "<unk>"]
    vocab = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), *pieces, ("<mask>", 0.0)]
    return XLMRobertaTokenizer(vocab=vocab)


def wordpiece_tokenizer():
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizer

    tok = BertWordPieceTokenizer(lowercase=True)
    tok.train_from_iterator(
        CORPUS, vocab_size=240, min_frequency=1, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    )
    return BertTokenizer(vocab=tok.get_vocab(), do_lower_case=True)


def modernbert_tokenizer():
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    tok = byte_bpe(["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"])
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:0 [SEP]:0",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok._tokenizer,
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        mask_token="[MASK]",
    )


def build(family: str):
    """Returns (saved model, base model, tokenizer) of a family's tiny random model."""
    import transformers as tf

    if family == "roberta":
        tok = roberta_tokenizer()
        cfg = tf.RobertaConfig(vocab_size=len(tok), **ROBERTA_SHAPE)
        model = tf.RobertaForMaskedLM(cfg)
        return model, model.roberta, tok
    if family == "xlm_roberta":
        tok = xlm_roberta_tokenizer()
        cfg = tf.XLMRobertaConfig(vocab_size=len(tok), **ROBERTA_SHAPE)
        model = tf.XLMRobertaModel(cfg, add_pooling_layer=True)
        return model, model, tok
    if family == "distilbert":
        tok = wordpiece_tokenizer()
        cfg = tf.DistilBertConfig(
            vocab_size=len(tok),
            dim=32,
            n_layers=2,
            n_heads=4,
            hidden_dim=48,
            max_position_embeddings=80,
            sinusoidal_pos_embds=True,
            pad_token_id=0,
        )
        model = tf.DistilBertForMaskedLM(cfg)
        return model, model.distilbert, tok
    if family == "electra":
        tok = wordpiece_tokenizer()
        cfg = tf.ElectraConfig(vocab_size=len(tok), embedding_size=16, num_hidden_layers=2, **SMALL)
        model = tf.ElectraForPreTraining(cfg)
        return model, model.electra, tok
    if family == "modernbert":
        tok = modernbert_tokenizer()
        cfg = tf.ModernBertConfig(
            vocab_size=len(tok),
            num_hidden_layers=4,
            global_attn_every_n_layers=2,
            local_attention=8,
            global_rope_theta=160000.0,
            local_rope_theta=10000.0,
            pad_token_id=tok.pad_token_id,
            cls_token_id=tok.cls_token_id,
            sep_token_id=tok.sep_token_id,
            bos_token_id=tok.cls_token_id,
            eos_token_id=tok.sep_token_id,
            **SMALL,
        )
        model = tf.ModernBertForMaskedLM(cfg)
        return model, model.model, tok
    raise ValueError(family)


def randomise(model, seed: int) -> None:
    """Draws every parameter again at a scale that makes the maps far from uniform (norm weights near 1)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=generator)
            is_norm = "norm" in name.lower()
            p.copy_(1 + 0.1 * noise if is_norm and name.endswith("weight") else noise * (0.1 if is_norm else 0.3))


def write(family: str, seed: int) -> None:
    import torch

    model, base, tok = build(family)
    model.config._attn_implementation = "eager"
    randomise(model, seed)
    model.eval()
    folder = OUT / family
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():
        stale.unlink()
    model.save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    from transformers import AutoModel, AutoTokenizer

    auto_tok = AutoTokenizer.from_pretrained(folder)
    reloaded = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    arrays: dict[str, np.ndarray] = {}
    for name, (text, pair) in CASES[family].items():
        encoded = auto_tok(text, pair, return_tensors="pt")
        # what the model reads: token types where the tokenizer gives them and the family has them
        inputs = {k: v for k, v in encoded.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
        if family in ("distilbert", "modernbert"):
            inputs.pop("token_type_ids", None)
        with torch.no_grad():
            out = reloaded(**inputs, output_attentions=True)
            base_out = base(**inputs)
        # the folder read back must be the model that was saved
        assert torch.allclose(out.last_hidden_state, base_out.last_hidden_state, atol=1e-6), family
        ids = encoded["input_ids"][0].numpy().astype(np.int32)
        arrays[f"{name}/text"] = np.asarray(text)
        arrays[f"{name}/text_pair"] = np.asarray(pair or "")
        arrays[f"{name}/input_ids"] = ids
        if "token_type_ids" in inputs:
            arrays[f"{name}/token_type_ids"] = inputs["token_type_ids"][0].numpy().astype(np.int32)
        arrays[f"{name}/attention"] = torch.stack(out.attentions)[:, 0].numpy().astype(np.float32)
        arrays[f"{name}/last_hidden"] = out.last_hidden_state[0].numpy().astype(np.float32)
        print(f"{family:12s} {name:8s} T={len(ids):3d} {auto_tok.convert_ids_to_tokens(ids.tolist())[:8]}")
    np.savez_compressed(folder / "reference.npz", **arrays)
    size = sum(f.stat().st_size for f in folder.iterdir())
    print(
        f"wrote {folder.relative_to(ROOT)}: {', '.join(sorted(f.name for f in folder.iterdir()))} ({size / 1e3:.0f} kB)"
    )


# Texts whose ids the sentencepiece-only XLM-R folder must give as transformers does (normalisation included:
# full-width letters and punctuation, accents, runs of spaces).
SPM_TEXTS = (ENGLISH, CHINESE, "ＡＢＣ！  Café   déjà vu…", PAIR[0])


def write_spm() -> None:
    """Writes tests/fixtures/encoders/xlm_roberta_spm/: config.json and sentencepiece.bpe.model only (a Unigram
    model trained with sentencepiece, nmt_nfkc normalisation as XLM-R's), and reference.npz with
    AutoTokenizer's ids of SPM_TEXTS (NAME/text, NAME/input_ids; "pair" is PAIR). Needs sentencepiece and
    protobuf in the benchmark venv."""
    import io

    import sentencepiece as spm
    from transformers import AutoTokenizer

    folder = OUT / "xlm_roberta_spm"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():
        stale.unlink()
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS),
        model_writer=model,
        vocab_size=120,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
    )
    (folder / "sentencepiece.bpe.model").write_bytes(model.getvalue())
    (folder / "config.json").write_text(json.dumps({"model_type": "xlm-roberta"}))
    tok = AutoTokenizer.from_pretrained(folder)
    arrays: dict[str, np.ndarray] = {}
    for index, text in enumerate(SPM_TEXTS):
        arrays[f"text{index}/text"] = np.asarray(text)
        arrays[f"text{index}/input_ids"] = np.asarray(tok(text)["input_ids"], np.int32)
    arrays["pair/text"], arrays["pair/text_pair"] = np.asarray(PAIR[0]), np.asarray(PAIR[1])
    arrays["pair/input_ids"] = np.asarray(tok(*PAIR)["input_ids"], np.int32)
    arrays["vocab_size"] = np.asarray(len(tok))
    np.savez_compressed(folder / "reference.npz", **arrays)
    (folder / "config.json").unlink()  # the tokenizer's test folder is the xlm_roberta fixture's config and weights
    size = sum(f.stat().st_size for f in folder.iterdir())
    print(f"wrote {folder.relative_to(ROOT)} ({size / 1e3:.0f} kB), vocabulary {len(tok)}")


def main() -> int:
    import torch

    torch.set_num_threads(1)
    families = sys.argv[1:] or [*CASES, "xlm_roberta_spm"]
    for family in families:
        if family == "xlm_roberta_spm":
            write_spm()
        else:
            write(family, seed=list(CASES).index(family))
    return 0


if __name__ == "__main__":
    sys.exit(main())
