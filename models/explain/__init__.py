"""Is attention an explanation? Measures that score α and attribution maps against the truth a model trained
here knows (measures.py), and the held-out scoreboard built from them (scoreboard.py)."""
