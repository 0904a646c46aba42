"""Decoder language models (GPT-2, the Llama family, Phi-3, Gemma 2/3, GPT-NeoX/Pythia, OLMo 2) read from Hugging Face
folders; see docs/models/lm.md."""
