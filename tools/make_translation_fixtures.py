"""Writes tests/fixtures/translation/<name>/: tiny random translation models as Hugging Face saves them, with
HF's outputs, for the parity tests of models/translation (tests/models/translation/test_parity.py; no torch there).

Run it in the benchmark venv (torch, transformers, sentencepiece):

    .bench-venv/bin/pip install sentencepiece
    .bench-venv/bin/python tools/make_translation_fixtures.py

Each folder holds what save_pretrained leaves (config.json, generation_config.json, model.safetensors and the
tokenizer files: Marian's source.spm, target.spm and vocab.json, trained here with the sentencepiece trainer on a
few English and Chinese sentences; T5's, BART's and mBART's tokenizer.json, built with `tokenizers`) and
reference.npz with, per pair i: source_i and target_i (texts), src_ids_i and labels_i (transformers' tokenizer
ids of the source and of the target), decoder_in_i (what the model's own teacher forcing feeds the decoder),
encoder_i [L, H, S, S], decoder_i [L, H, T, T], cross_i [L, H, T, S] (eager, output_attentions=True),
logits_i [T, V], generated_i (generate with num_beams=1, do_sample=False: the ids after the start token), and
tok_text_i, tok_source_i, tok_target_i: the tokenizers' ids of harder texts (spaces, emoji, a language code).
Weights are drawn larger than HF's initialisation so that the maps are far from uniform.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "translation"
MAX_NEW = 10

ENGLISH = (
    "The cat sat on the mat.",
    "I love reading books in the library.",
    "Attention lets a model align words.",
    "The weather is nice today.",
    "She translates English into Chinese.",
    "We walked to the station together.",
    "Where is the bus stop?",
    "The quick brown fox jumps over the lazy dog.",
    "My friend drinks green tea.",
    "Every head of the decoder reads the source sentence.",
)
CHINESE = (
    "猫坐在垫子上。",
    "我喜欢在图书馆看书。",
    "注意力让模型对齐词语。",
    "今天天气很好。",
    "她把英语翻译成中文。",
    "我们一起走到车站。",
    "公共汽车站在哪里？",
    "敏捷的棕色狐狸跳过了懒狗。",
    "我的朋友喝绿茶。",
    "解码器的每个头都读源句子。",
)
# Read by the tokenizers only (ids compared with transformers'): spaces, unknown characters, a language code.
TOKENIZER_TEXTS = (
    "  Two  spaces   and a tab\there. ",
    "Emoji 😺 and accents: café, naïve!",
    ">>cmn_Hans<< The cat sat.",
    "中文和English混在一起，123。",
    "<unk> is a word here",
)
PAIRS = (("The cat sat on the mat.", "猫坐在垫子上。"), ("Where is the zebra? 42 €", "斑马在哪里？"))


def randomize(model, seed: int) -> None:
    """Draws every parameter larger than HF's init: matrices ~ N(0, 3² / fan_in), embeddings N(0, 1), norm weights
    1 + N(0, 0.3²), biases and final_logits_bias N(0, 0.05²). Tied tensors stay tied (one Parameter). Larger biases
    made every random BART and Marian write one token again and again; with these, greedy outputs vary."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=generator)
            if param.ndim == 1:
                param.copy_(1 + 0.3 * noise if "norm" in name and name.endswith("weight") else 0.05 * noise)
            elif "shared" in name or "embed" in name or "relative_attention_bias" in name:
                param.copy_(noise)
            else:
                param.copy_(2.0 * noise / param.shape[1] ** 0.5)
        if hasattr(model, "final_logits_bias"):
            model.final_logits_bias.copy_(0.05 * torch.randn(model.final_logits_bias.shape, generator=generator))


def train_unigram(lines: list[str], prefix: Path, size: int, **special_ids: int) -> Path:
    """Trains a sentencepiece Unigram model of `size` pieces on `lines` (one thread: the same pieces on every run);
    returns the path of prefix.model. special_ids: unk_id, eos_id, … where sentencepiece's defaults do not fit."""
    import sentencepiece as spm

    corpus = prefix.with_suffix(".txt")
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(prefix),
        vocab_size=size,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=1,
        **special_ids,
    )
    return prefix.with_suffix(".model")


def marian_tokenizer(folder: Path) -> dict:
    """Trains source.spm (English) and target.spm (Chinese) and writes the joint vocab.json as opus-mt lays it
    out: </s> 0, <unk> 1, the pieces of both models, <pad> last. Returns the config's token ids."""
    import sentencepiece as spm

    with tempfile.TemporaryDirectory() as scratch:
        for name, lines, size in (("source", ENGLISH, 90), ("target", CHINESE, 80)):
            model = train_unigram(lines * 3, Path(scratch) / name, size, unk_id=1, eos_id=0, bos_id=-1, pad_id=-1)
            shutil.copy(model, folder / f"{name}.spm")
    vocab = {"</s>": 0, "<unk>": 1}
    for name in ("source", "target"):
        processor = spm.SentencePieceProcessor(model_file=str(folder / f"{name}.spm"))
        for i in range(processor.get_piece_size()):
            vocab.setdefault(processor.id_to_piece(i), len(vocab))
    vocab["<pad>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=1), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "MarianTokenizer", "source_lang": "en", "target_lang": "zh"})
    )
    return {
        "vocab_size": len(vocab),
        "eos_token_id": 0,
        "pad_token_id": len(vocab) - 1,
        "decoder_start_token_id": len(vocab) - 1,
    }


def spm_pieces(lines: list[str], size: int) -> list[tuple[str, float]]:
    """Returns the (piece, score) list of a sentencepiece Unigram model trained on `lines` (one thread: the same
    pieces on every run)."""
    import sentencepiece as spm

    with tempfile.TemporaryDirectory() as scratch:
        processor = spm.SentencePieceProcessor(model_file=str(train_unigram(lines, Path(scratch) / "m", size)))
        return [(processor.id_to_piece(i), processor.get_score(i)) for i in range(processor.get_piece_size())]


def json_tokenizer(folder: Path, kind: str) -> dict:
    """Builds tokenizer.json with `tokenizers`: T5 (Unigram, Metaspace, "$A </s>"; <pad> 0, </s> 1, <unk> 2),
    BART (byte-level BPE, "<s> $A </s>") or mBART (Unigram, "$A </s> en_XX", the language codes last). Returns the
    config's token ids."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    text = list(ENGLISH + CHINESE) * 3
    if kind == "bart":
        specials = ["<s>", "<pad>", "</s>", "<unk>"]
        tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.train_from_iterator(
            text,
            trainers.BpeTrainer(
                vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
            ),
        )
        template = "<s> $A </s>"
    else:
        # A Unigram made from a sentencepiece model, as converted T5 and mBART tokenizers are (tokenizers' own
        # Unigram trainer gives another vocabulary on every run); special tokens first, mBART's codes last.
        specials = ["<pad>", "</s>", "<unk>"] if kind == "t5" else ["<s>", "<pad>", "</s>", "<unk>"]
        codes = [] if kind == "t5" else ["en_XX", "zh_CN"]
        pieces = [(p, s) for p, s in spm_pieces(text, 200) if p not in ("<unk>", "<s>", "</s>")]
        vocab = [(token, 0.0) for token in specials] + pieces + [(code, 0.0) for code in codes]
        tokenizer = Tokenizer(models.Unigram(vocab, unk_id=specials.index("<unk>")))
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        tokenizer.decoder = decoders.Metaspace()
        tokenizer.add_special_tokens(specials + codes)
        specials = specials + codes
        template = "$A </s>" if kind == "t5" else "$A </s> en_XX"
    used = [token for token in specials if token in template.split()]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=template, special_tokens=[(token, tokenizer.token_to_id(token)) for token in used]
    )
    PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="<unk>", pad_token="<pad>", eos_token="</s>"
    ).save_pretrained(folder)
    ids = {token: tokenizer.token_to_id(token) for token in specials}
    config = {"vocab_size": tokenizer.get_vocab_size(), "pad_token_id": ids["<pad>"], "eos_token_id": ids["</s>"]}
    if kind == "t5":
        config["decoder_start_token_id"] = ids["<pad>"]
    elif kind == "bart":
        config.update(bos_token_id=ids["<s>"], decoder_start_token_id=ids["</s>"])
    else:
        config.update(bos_token_id=ids["<s>"], decoder_start_token_id=ids["zh_CN"])
    return config


SMALL = dict(
    d_model=32,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=4,
    decoder_attention_heads=4,
    encoder_ffn_dim=48,
    decoder_ffn_dim=48,
    max_position_embeddings=64,
)
# name -> (model_type, config kwargs, options: bad_words, forced (BOS/EOS), seed (one whose greedy outputs vary))
CASES: dict[str, tuple[str, dict, dict]] = {
    "marian": (
        "marian",
        dict(SMALL, activation_function="swish", scale_embedding=True),
        {"bad_words": True, "seed": 14},
    ),
    "t5": (
        "t5",
        dict(
            d_model=32,
            d_kv=8,
            d_ff=48,
            num_layers=2,
            num_decoder_layers=2,
            num_heads=4,
            relative_attention_num_buckets=8,
            relative_attention_max_distance=20,
            feed_forward_proj="relu",
        ),
        {},
    ),
    "t5_gated": (
        "t5",
        dict(
            d_model=24,
            d_kv=8,
            d_ff=40,
            num_layers=2,
            num_decoder_layers=2,
            num_heads=2,
            relative_attention_num_buckets=16,
            relative_attention_max_distance=32,
            feed_forward_proj="gated-gelu",
            tie_word_embeddings=False,
        ),
        {"seed": 12},
    ),
    "bart": ("bart", dict(SMALL, activation_function="gelu", scale_embedding=False), {"forced": True}),
    "mbart": ("mbart", dict(SMALL, activation_function="gelu", scale_embedding=True, encoder_layers=3), {"seed": 10}),
}


def make_case(name: str, model_type: str, kwargs: dict, generation: dict, seed: int) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer, GenerationConfig, MarianTokenizer

    folder = OUT / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    ids = marian_tokenizer(folder) if model_type == "marian" else json_tokenizer(folder, model_type.replace("_", ""))
    config = AutoConfig.for_model(model_type, **ids, **kwargs)
    torch.manual_seed(seed)
    model = AutoModelForSeq2SeqLM.from_config(config, attn_implementation="eager").eval()
    randomize(model, seed)
    generation_config = GenerationConfig(
        decoder_start_token_id=config.decoder_start_token_id,
        eos_token_id=config.eos_token_id,
        pad_token_id=config.pad_token_id,
        max_length=MAX_NEW + 1,
        num_beams=1,
        do_sample=False,
    )
    if generation.get("bad_words"):
        generation_config.bad_words_ids = [[config.pad_token_id]]
    if generation.get("forced"):
        generation_config.forced_bos_token_id = config.bos_token_id
        generation_config.forced_eos_token_id = config.eos_token_id
    model.generation_config = generation_config
    model.save_pretrained(folder, safe_serialization=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    tokenizer = (
        MarianTokenizer.from_pretrained(folder) if model_type == "marian" else AutoTokenizer.from_pretrained(folder)
    )
    arrays = {}
    for i, (source, target) in enumerate(PAIRS):
        batch = tokenizer(source, text_target=target)
        src, labels = torch.tensor([batch["input_ids"]]), torch.tensor([batch["labels"]])
        with torch.no_grad():
            out = model(input_ids=src, labels=labels, output_attentions=True)
            generated = model.generate(src, num_beams=1, do_sample=False, max_new_tokens=MAX_NEW)
        shift = model.model if hasattr(model, "model") else model
        decoder_in = shift._shift_right(labels) if model_type == "t5" else None
        if decoder_in is None:
            module = sys.modules[type(model).__module__]
            decoder_in = (
                module.shift_tokens_right(labels, config.pad_token_id)
                if model_type == "mbart"
                else module.shift_tokens_right(labels, config.pad_token_id, config.decoder_start_token_id)
            )
        arrays.update(
            {
                f"source_{i}": np.asarray(source),
                f"target_{i}": np.asarray(target),
                f"src_ids_{i}": np.asarray(batch["input_ids"], np.int32),
                f"labels_{i}": np.asarray(batch["labels"], np.int32),
                f"decoder_in_{i}": decoder_in[0].numpy().astype(np.int32),
                f"src_pieces_{i}": np.asarray(tokenizer.convert_ids_to_tokens(batch["input_ids"])),
                f"encoder_{i}": torch.stack(out.encoder_attentions)[:, 0].numpy().astype(np.float32),
                f"decoder_{i}": torch.stack(out.decoder_attentions)[:, 0].numpy().astype(np.float32),
                f"cross_{i}": torch.stack(out.cross_attentions)[:, 0].numpy().astype(np.float32),
                f"logits_{i}": out.logits[0].numpy().astype(np.float32),
                f"generated_{i}": generated[0, 1:].numpy().astype(np.int32),
            }
        )
    for i, text in enumerate(TOKENIZER_TEXTS):
        batch = tokenizer(text, text_target=text)
        arrays[f"tok_text_{i}"] = np.asarray(text)
        arrays[f"tok_source_{i}"] = np.asarray(batch["input_ids"], np.int32)
        arrays[f"tok_target_{i}"] = np.asarray(batch["labels"], np.int32)
    np.savez_compressed(folder / "reference.npz", **arrays)
    size = sum(p.stat().st_size for p in folder.iterdir())
    print(
        f"{name:10s} S={[len(arrays[f'src_ids_{i}']) for i in range(len(PAIRS))]} "
        f"T={[len(arrays[f'labels_{i}']) for i in range(len(PAIRS))]} "
        f"generated={[arrays[f'generated_{i}'].tolist() for i in range(len(PAIRS))]} {size / 1e3:.0f} kB"
    )


def main() -> int:
    import torch

    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    for seed, (name, (model_type, kwargs, generation)) in enumerate(CASES.items()):
        make_case(name, model_type, kwargs, generation, generation.get("seed", seed))
    total = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {OUT.relative_to(ROOT)} ({total / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
