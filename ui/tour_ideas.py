"""Around the guided tour's steps (ui/tour.py): why attention at all, the survey's idea each full page shows, and
the pages the tour's last step ends with. Texts are marked with N_ and shown translated where they are used."""

from __future__ import annotations

from models import registry
from viz.i18n_text import N_

# The tour's opening: why attention at all, as the survey opens (shown under the tour's introduction).
ADVANTAGES = N_("Why attention? It lets a model integrate information across the whole input, instead of "
                "squeezing it into one fixed vector; it takes inputs of any length; and, without recurrence, its "
                "computation runs in parallel over the positions.")
# The survey's idea each full page shows, one sentence per page: under the page's title (ui/story.py), and
# beside the pages the tour's last step ends with ("What next").
IDEAS = {
    registry.CORPUS.file: N_("What a head does shows only across many inputs: the same Query–Key scoring, summarised "
                             "over a corpus."),
    registry.EXPLANATION.file: N_("α is one answer to \"what did the output read?\": attribution methods give others, "
                                  "and another attention can give the same output; where the truth is known, each "
                                  "answer can be scored."),
    registry.FEEDFORWARD.file: N_("Attention without recurrence and without a query: each step scores its own state, "
                                  "and the softmax of those scores over time weights the sum the network reads."),
    registry.HAN.file: N_("Hierarchical attention: words are weighed inside each sentence, then sentences across the "
                          "document, each against a learned context vector, a parameter, not the seq2seq context "
                          "vector c."),
    registry.IMAGES.file: N_("Soft attention reads the α-weighted average of every image region and is trained by "
                             "backpropagation; hard attention reads one region drawn from α and needs REINFORCE. "
                             "Self-attention scores a patch against every patch of the same image: Q = K = V."),
    registry.INDUCTION.file: N_("Two self-attention layers can learn to copy: a head finds where the current token "
                                "appeared before and attends to the token that followed it."),
    registry.INSIDE_LM.file: N_("The survey's general view (query, key, value: score, normalise, average) at work in a "
                                "real decoder: self-attention over the tokens the model writes, head by head."),
    registry.LANGUAGE_MODEL.file: N_("A decoder language model is self-attention with a causal mask: each token's "
                                     "query may score only the keys of itself and the tokens before it."),
    registry.PLAYGROUND.file: N_("The survey's general view: attention maps a Query to Key–Value pairs in three "
                                 "stages, score, normalise and weighted sum; every other page is one choice of Q, K, V "
                                 "and of the score."),
    registry.SELF_ATTENTION.file: N_("Self-attention is attention with Q = K = V: every token of one sentence queries "
                                     "every token of the same sentence, in each of the model's heads."),
    registry.SENTENCE_ALIGNMENT.file: N_("Luong's alignment functions and local windows, applied to two sentences' "
                                         "pretrained vectors: attention as a soft alignment, with no trained "
                                         "parameters."),
    registry.SEQ2SEQ.file: N_("The encoder–decoder reads its whole input through one vector c, a bottleneck; "
                              "Bahdanau's and Luong's attention give the decoder a new context c_i at every output "
                              "step, scored against every encoder state (global) or a window of them (local)."),
    registry.TRANSFORMER.file: N_("The Transformer uses attention three ways: encoder self-attention (Q = K = V), "
                                  "masked decoder self-attention, and cross-attention, where the decoder's queries "
                                  "meet the encoder's keys and values (K = V)."),
}
# The pages the tour's last step ends with ("What next"), each beside its idea.
NEXT_PAGES: tuple[registry.Page, ...] = (registry.LANGUAGE_MODEL, registry.INSIDE_LM, registry.INDUCTION, registry.CORPUS,
                                         registry.PLAYGROUND)
