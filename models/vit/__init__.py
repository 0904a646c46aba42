"""Vision transformers read from a local Hugging Face folder: ViT, DeiT, DINO and DINOv2 (with or without registers).

config.py reads config.json and preprocessor_config.json; preprocess.py turns a photo into pixel values as the
folder's image processor does (Pillow); model.py holds the modules, the strict loader and the one forward
(``encoder``); records.py turns a photo into attention records (per-head CLS maps, rollout, one patch's attention,
high-norm "artifact" patches).
"""
