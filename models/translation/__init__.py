"""Hugging Face translation models from a local folder (Marian, T5, BART, mBART): one encoder–decoder forward
(forward.py) read from one per-architecture description (config.py), their tokenizers and attention records."""
