"""Head analysis shared by every family with layers × heads of self-attention (numpy only):
detectors (TransformerLens's pattern scores, prefix matching), per-head statistics and the
model view's records, attention rollout and flow."""
