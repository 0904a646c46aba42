"""Decoder language models (GPT-2 and the Llama family) read from Hugging Face folders; see docs/models/lm.md."""
