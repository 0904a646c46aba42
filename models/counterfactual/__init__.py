"""The 2019 tests of attention as explanation, live on the Bahdanau date model and the HAN (issue 55 §3): Jain &
Wallace's adversarial α̃ and permutations, Wiegreffe & Pinter's uniform α, Serrano & Smith's decision flips.
``python -m models.counterfactual [count]`` prints the figures over held-out inputs (docs/models/counterfactual.md).
"""
