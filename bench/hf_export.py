"""The baseline of the whole-process batch export: a plain Hugging Face eager script.

    .bench-venv/bin/python bench/hf_export.py INPUT_FILE OUT_DIR MODEL_DIR

One forward per line (transformers' BertModel, attn_implementation="eager",
output_attentions=True, 2 threads), one uncompressed .npz per line with the 6 × 12 attention
maps and the tokens: what a researcher would write in a notebook. Run by bench/batch_export.py.
"""

import sys
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from transformers import BertModel


def main() -> int:
    input_file, out_dir, model_dir = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    torch.set_num_threads(2)
    tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(512)
    model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [line for line in Path(input_file).read_text(encoding="utf-8").splitlines() if line.strip()]
    for number, line in enumerate(lines, start=1):
        encoding = tokenizer.encode(line)
        ids = torch.tensor([encoding.ids])
        with torch.inference_mode():
            out = model(input_ids=ids, token_type_ids=torch.tensor([encoding.type_ids]),
                        attention_mask=torch.ones_like(ids), output_attentions=True)
        weights = torch.stack(out.attentions)[:, 0].numpy()  # [layer, head, T, T]
        np.savez(out_dir / f"{number:04d}.npz", weights=weights, query_labels=np.asarray(encoding.tokens))
    print(f"wrote {len(lines)} files to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
