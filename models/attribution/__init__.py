"""Attribution methods beside attention α (issue 55 §1): gradients, occlusion, norm-based, ALTI, value zeroing
and Chefer et al.'s relevance, each returned as an AttentionRecord (models/attribution/records.py)."""
