"""The language model's tokenizer: a byte-level BPE trained here with Hugging Face `tokenizers`.

GPT-2's conventions: bytes mapped to printable characters (ByteLevel pre-tokenizer and decoder, no
normaliser, no unknown token), and one special token, <|endoftext|>, which separates documents in
the training stream. Unlike GPT-2's own tokenizer.json, the post-processor also puts it first, as
BOS, so that the tokenizer alone says what the model reads: the model is trained on windows that
start with it, and every loader that applies tokenizer.json's post-processor (ours, Hugging Face's
PreTrainedTokenizerFast) gives the model the same ids.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from models.lm.task import EOT

VOCAB_SIZE = 4096
EOT_ID = 0  # the trainer puts the one special token first


def train_tokenizer(texts: Iterable[str], vocab_size: int = VOCAB_SIZE) -> Tokenizer:
    """Returns a byte-level BPE of `vocab_size` ids (<|endoftext|> = 0) trained on texts, in order."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(texts, trainer)
    if tokenizer.token_to_id(EOT) != EOT_ID:
        raise AssertionError(f"{EOT} must be id {EOT_ID}, got {tokenizer.token_to_id(EOT)}")
    tokenizer.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single=f"{EOT} $A", pair=f"{EOT} $A {EOT} $B:1",
                                      special_tokens=[(EOT, EOT_ID)]),
    ])
    return tokenizer


def encode_plain(tokenizer: Tokenizer, texts: list[str]) -> list[list[int]]:
    """Returns each text's ids without the post-processor's BOS (the stream adds separators itself)."""
    return [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


def tokenizer_config(positions: int) -> dict:
    """Returns tokenizer_config.json's content: Hugging Face reads tokenizer.json as it is (the fast
    tokenizer class) and names <|endoftext|> as its BOS, EOS and unknown token, as GPT-2's does."""
    return {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": EOT, "eos_token": EOT, "unk_token": EOT,
            "model_max_length": positions, "clean_up_tokenization_spaces": False}
