"""The corpus pass for a decoder language model (models/lm: the GPT trained here, or a GPT-2/Llama folder).

The same pass as models/corpus/run.py (length buckets, batches sized by bytes, statistics computed
inside the jitted call, the batch axis sharded over every device, parameters replicated), on a
decoder's causal maps. Its statistics are LM_STATISTIC_IDS (models/corpus/heads.py): the share on
the first token takes [CLS]'s and [SEP]'s place, and "next" is left out (always 0 in a causal map).
Punctuation: a token whose text, spaces stripped, is made only of punctuation characters (Unicode
P*), special tokens excluded.
"""

from __future__ import annotations

import unicodedata

import jax
import numpy as np
from jax.sharding import Mesh

from models.corpus.heads import LM_KEY_KINDS, LM_STATISTIC_IDS, layer_statistics
from models.corpus.run import MAX_BATCH_BYTES, CorpusModel


def is_punctuation_label(label: str) -> bool:
    """Returns True for a token label made only of punctuation characters once spaces are stripped."""
    text = label.strip()
    return bool(text) and all(unicodedata.category(ch).startswith("P") for ch in text)


def lm_key_kinds(labels, special_first: bool = False) -> np.ndarray:
    """Returns bool [T, 2] in LM_KEY_KINDS order: the first position; punctuation (not the special first token)."""
    kinds = np.zeros((len(labels), len(LM_KEY_KINDS)), bool)
    kinds[:1, 0] = True
    kinds[:, 1] = [is_punctuation_label(label) for label in labels]
    if special_first and len(labels):
        kinds[0, 1] = False
    return kinds


def _stats_forward(graphdef):
    from flax import nnx

    from models.lm.model import decoder_forward

    def forward(state, ids, mask, lengths, kinds):  # -> float32 [B, L, H, S]
        _, maps = decoder_forward(nnx.merge(graphdef, state), ids, mask, logits=False, attention=True, stack=False)
        return layer_statistics(maps, ids, lengths, kinds, LM_KEY_KINDS, LM_STATISTIC_IDS)

    return forward


class LMCorpusModel(CorpusModel):
    """An LMRunner's module and tokenizer with a jitted statistics function sharded over a mesh."""

    statistic_ids = LM_STATISTIC_IDS

    def __init__(self, runner, mesh: Mesh | None = None, max_batch_bytes: int = MAX_BATCH_BYTES):
        self.runner = runner
        self.config = runner.config
        self.layers, self.heads = self.config.num_layers, self.config.num_heads
        self._place(mesh, max_batch_bytes)
        self.params = jax.device_put(runner.lm.state, self.replicated)
        self._fn = self._jit(_stats_forward(runner.lm.graphdef), 4)

    def token_count(self, encoding) -> int:
        return len(encoding.ids)

    def _arrays(self, encodings, rows: int, length: int) -> tuple[np.ndarray, ...]:
        ids = np.zeros((rows, length), np.int32)
        mask = np.zeros((rows, length), bool)
        lengths = np.ones(rows, np.int32)
        kinds = np.zeros((rows, length, len(LM_KEY_KINDS)), bool)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n], mask[row, :n], lengths[row] = enc.ids, True, n
            kinds[row, :n] = lm_key_kinds(enc.labels, enc.special_first)
        mask[len(encodings):, 0] = True  # padding rows attend somewhere
        return ids, mask, lengths, kinds
