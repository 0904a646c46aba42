"""The registry's entries of the page "Is attention an explanation?" (pages.EXPLANATION): the attribution methods
beside α on each transformer (models/attribution: one entry per architecture, the method an option), and the 2019
tests (models/counterfactual): Jain & Wallace's adversary and permutation, Wiegreffe & Pinter's uniform α, on the
Bahdanau model and the HAN. models/registry.py appends EXPLANATION_MECHANISMS to MECHANISMS.
"""

from __future__ import annotations

from models import options as o
from models import pages
from models.entry import Mechanism
from models.text import N_

_SEED = o.SEED.with_(help=N_("the adversary's random starts and the shuffles"))
_LEVEL = o.Option("level", "choice", default="sentence", choices=(N_("sentence"), N_("word")), label=N_("Level"),
                  help=N_("the HAN's attention to change: over the sentences, or over the words of one sentence"))
_SENTENCE = o.Option("sentence", "int", low=1, high=30, step=1, label=N_("Sentence"),
                     help=N_("word level: whose words (from 1; default: the sentence of highest α)"))
_JW = "Jain & Wallace (2019), Attention is not Explanation"
_WP = "Wiegreffe & Pinter (2019), Attention is not not Explanation"
_FORMULAS = {
    "adversary": r"\max_{\tilde\alpha}\ \operatorname{JSD}(\tilde\alpha,\alpha)\ \ \text{s.t.}\ \ "
                 r"\operatorname{TVD}(y(\tilde\alpha), y(\alpha)) \le 0.01",
    "permutation": r"\tilde\alpha = \alpha_{\pi},\ \pi\ \text{random};\quad \operatorname{TVD}(y(\tilde\alpha), y(\alpha))",
    "uniform": r"\tilde\alpha_j = 1/T;\quad \operatorname{TVD}(y(\tilde\alpha), y(\alpha))",
}
_SUMMARIES = {
    "adversary": N_("An attention as different as possible from α (Jensen–Shannon divergence) that leaves every "
                    "output within 0.01 (total variation distance)."),
    "permutation": N_("α shuffled 100 times over the input: how far the output moves."),
    "uniform": N_("α replaced by equal weights: how far the output moves, beside the models trained without "
                  "attention."),
}
_NAMES = {
    ("bahdanau", "adversary"): N_("Bahdanau: adversarial attention"),
    ("bahdanau", "permutation"): N_("Bahdanau: shuffled attention"),
    ("bahdanau", "uniform"): N_("Bahdanau: uniform attention"),
    ("han", "adversary"): N_("HAN: adversarial attention"),
    ("han", "permutation"): N_("HAN: shuffled attention"),
}
_DATE = {"text": "Wednesday, May 9, 2018"}
REVIEW = "We went there on a Friday. The waiter was rude and slow. We took the bus home."
_DATE_OPTIONS = (o.TEXT.with_(max_chars=1_000, help=N_("the text to normalise, e.g. '9 May 2018'")), _SEED)
_HAN_OPTIONS = (o.TEXT.with_(max_chars=20_000, help=N_("a document of a few sentences")), _LEVEL, _SENTENCE, _SEED)


def _entry(model: str, test: str) -> Mechanism:
    return Mechanism(
        id=f"{model}-{test}", name=_NAMES[model, test], paper=_WP if test == "uniform" else _JW,
        formula=_FORMULAS[test], page=pages.EXPLANATION.file, summary=_SUMMARIES[test], family="counterfactual",
        variant=test if model == "bahdanau" else f"{model}-{test}",
        builder=f"models.counterfactual.records:{'seq2seq' if model == 'bahdanau' else 'han'}_test_record",
        options=_DATE_OPTIONS if model == "bahdanau" else _HAN_OPTIONS,
        example=_DATE if model == "bahdanau" else {"text": REVIEW},
    )


# The attribution methods (models/attribution/methods.py METHODS), in the order the page shows them.
METHOD = o.Option(
    "method", "choice", default="integrated-gradients",
    choices=(N_("norm"), N_("alti"), N_("value-zeroing"), N_("chefer"), N_("gradient-x-input"),
             N_("integrated-gradients"), N_("occlusion")), label=N_("Attribution method"),
    help=N_("an attribution beside α: norm (Kobayashi et al. 2020), alti (Ferrando et al. 2022), value-zeroing "
            "(Mohebbi et al. 2023), chefer (Chefer et al. 2021), gradient-x-input, integrated-gradients, occlusion; "
            "where one does not apply, the reason is given in one line"))
_ATTRIBUTION_PAPER = ("Jain & Wallace (2019), Attention is not Explanation; Ferrando et al. (2022), Measuring the "
                      "Mixing of Contextual Information in the Transformer; Sundararajan et al. (2017), Axiomatic "
                      "Attribution for Deep Networks")
_ATTRIBUTION_FORMULA = (r"\text{IG}_j = (x_j - x'_j) \cdot \int_0^1 \frac{\partial f(x' + a(x - x'))}{\partial x_j}\,da,"
                        r"\quad \text{norm}_{ij} = \lVert \alpha_{ij}\, x_j W_V W_O \rVert")


def _attribution(mechanism_id: str, name: str, family: str, builder: str, summary: str, options: tuple,
                 example: dict) -> Mechanism:
    return Mechanism(
        id=mechanism_id, name=name, paper=_ATTRIBUTION_PAPER, formula=_ATTRIBUTION_FORMULA,
        page=pages.EXPLANATION.file, summary=summary, family=family, variant="attribution",
        builder=f"models.attribution.records:{builder}", options=(*options, METHOD),
        example={**example, "method": "norm"},
    )


ATTRIBUTION_MECHANISMS: tuple[Mechanism, ...] = (
    _attribution("transformer-attribution", N_("Attributions beside α in MiniLM"), "transformer",
                 "encoder_attribution_record",
                 N_("What each token's final vector owes to every input token, by a method other than α: vector "
                    "norms, ALTI, value zeroing, Chefer's gradient-weighted attention, gradients or occlusion."),
                 (o.TEXT.with_(max_chars=20_000), o.TEXT_PAIR, o.MODEL_DIR), {"text": "The cat sat on the mat."}),
    _attribution("lm-attribution", N_("Attributions beside α in a decoder language model"), "lm",
                 "decoder_attribution_record",
                 N_("What each next-token prediction owes to the tokens before it, by a method other than α."),
                 (o.TEXT.with_(max_chars=20_000), o.MODEL_DIR), {"text": "The cat sat on the mat. The cat sat on the"}),
    _attribution("transformer-cross-attribution", N_("Attributions beside cross-attention in the date Transformer"),
                 "encdec", "encdec_attribution_record",
                 N_("What each output character owes to each input character, by a method other than the "
                    "cross-attention α, against the date's true fields."),
                 (o.TEXT.with_(max_chars=1_000, help=N_("the text to normalise, e.g. '9 May 2018'")),
                  o.Option("step", "int", low=0, high=1_000_000,
                           help=N_("a training-step snapshot instead of the final weights"))),
                 {"text": "Wednesday, May 9, 2018"}),
)
FLOW_MINILM = Mechanism(
    id="flow-minilm", name=N_("Information flow routes in MiniLM"), family="transformer", variant="flow",
    page=pages.EXPLANATION.file,
    paper="Ferrando & Voita (2024), Information Flow Routes; Tufanov et al. (2024), LLM Transparency Tool",
    formula=r"w(p) = \frac{\max(0,\ \lVert y \rVert_1 - \lVert y - p \rVert_1)}"
            r"{\sum_{p'} \max(0,\ \lVert y \rVert_1 - \lVert y - p' \rVert_1)}",
    summary=N_("Every sum in MiniLM's residual stream split into its parts, each carried through the layer norm that "
               "follows it, and the route traced back from one token's final vector through the edges above a "
               "threshold."),
    builder="models.flow.records:encoder_flow_record",
    options=(o.TEXT.with_(max_chars=2_000), o.MODEL_DIR,
             o.Option("threshold", "float", default=0.04, low=0.0, high=1.0, step=0.01, label=N_("Threshold"),
                      help=N_("an edge is kept when its weight is above this (0 keeps every edge)")),
             o.Option("position", "int", default=0, low=-512, high=511, step=1, label=N_("Token"),
                      help=N_("the token whose final vector is traced back (from 0; -1 = the last; 0 = [CLS])"))),
    example={"text": "The cat sat on the mat."},
)
EXPLANATION_MECHANISMS: tuple[Mechanism, ...] = (FLOW_MINILM, *ATTRIBUTION_MECHANISMS) + tuple(
    _entry(model, test) for model, test in _NAMES)
