"""Attention after 2017: the variants inside today's models, each a few pure functions on the core
(models/attention.py), in the (…, heads, tokens, width) layout a transformer layer uses.

heads.py        who shares keys and values: MHA, MQA, GQA, and MLA's latent cache (naive and absorbed forms)
positions.py    where positions enter: RoPE, p-RoPE, NoPE, ALiBi, sliding windows, local/global layers
normalisers.py  how scores become weights: sigmoid with b = −log n, a sink logit, softmax₁
gated.py        a sigmoid gate on each head's output (Qiu et al. 2025)
differential.py two softmax maps subtracted, λ re-parameterised, per-head RMSNorm (Ye et al. 2025)
linear.py       linear attention with φ = elu + 1, in its parallel and recurrent forms
online.py       FlashAttention's online softmax in key blocks, keeping the log-sum-exp
records.py      the registry builders (models/registry_variants.py): the Playground's q, k, v → AttentionRecord
"""
