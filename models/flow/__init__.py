"""Information flow routes (Ferrando & Voita 2024; the LLM Transparency Tool, Tufanov et al. 2024): the contribution
graph of a transformer from one forward pass, and the subgraph traced back from a prediction."""
