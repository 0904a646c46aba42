"""The registry's decoder language model entries: causal self-attention (pages.LANGUAGE_MODEL) and
what happens inside the model (pages.INSIDE_LM: generation, neuron view, logit lens, head knock-out).

models/registry.py appends LM_MECHANISMS to MECHANISMS; the entries follow the rules written there.
"""

from __future__ import annotations

from models import options as o
from models import pages
from models.entry import Mechanism
from models.text import N_

_TEXT = o.TEXT.with_(max_chars=20_000)
_FOLDER = o.MODEL_DIR.with_(help=N_("a local Hugging Face-format GPT-2, Llama, Mistral or Qwen folder "
                                    "(default: the GPT trained here, checkpoints/lm)"))
_EXAMPLE = {"text": "The cat sat on the mat. The cat sat on the"}
_GPT2 = "Radford et al. (2019), Language Models are Unsupervised Multitask Learners (GPT-2)"
_BERTVIZ = "Vig (2019), A Multiscale Visualization of Attention in the Transformer Model (BertViz)"


def _lm(variant: str | None, name: str, paper: str, formula: str, summary: str, builder: str, *options: o.Option,
        sized: bool = True, example: dict | None = None) -> Mechanism:
    # One entry of the family: id "lm" or "lm-<variant>", on the Language model page or (a variant) the Inside
    # page; builder "module:function" under models.lm (sized: with the "<function>_size" estimate beside it).
    return Mechanism(
        id="lm" if variant is None else f"lm-{variant}", name=name, paper=paper, formula=formula,
        page=(pages.LANGUAGE_MODEL if variant is None else pages.INSIDE_LM).file, summary=summary, family="lm",
        variant=variant, builder=f"models.lm.{builder}", record_size=f"models.lm.{builder}_size" if sized else None,
        options=(_TEXT, _FOLDER, *options), example={**_EXAMPLE, **(example or {})},
    )


def _whole(name: str, default: int, low: int, high: int, label: str, help_text: str) -> o.Option:
    return o.Option(name, "int", default=default, low=low, high=high, step=1, label=label, help=help_text)


LM_MECHANISMS: tuple[Mechanism, ...] = (
    _lm(None, N_("Causal self-attention in a decoder language model"), f"{_GPT2}; Touvron et al. (2023), LLaMA",
        r"\alpha^{(l,h)} = \operatorname{softmax}\!\left(\frac{Q_h K_{g(h)}^\top}{\sqrt{d}} + M\right),"
        r"\ M_{ij} = -\infty \text{ for } j > i,\quad g(h) = \lfloor h / G \rfloor",
        N_("Every token of a GPT-style model attends to itself and the tokens before it: the GPT trained "
           "here, or your own GPT-2, Llama, Mistral or Qwen folder."), "records:lm_record",
        o.Option("layers", "text", max_chars=200, label=N_("Layers"),
                 help=N_("which layers' maps to keep, e.g. 0-3 or 0,5,11 (default: all)"))),
    _lm("generate", N_("Attention over the tokens a language model writes"), f"{_GPT2}; {_BERTVIZ}",
        r"x_{t+1} \sim \operatorname{softmax}(z_t / \tau)\ \text{(top-}k\text{)},\quad "
        r"\alpha^{(l,h)}_{t} = \operatorname{softmax}\!\left(\frac{q_t K_{\le t}^\top}{\sqrt{d}}\right)",
        N_("The model writes N tokens after a prompt, with a KV cache; row t of each map is what each head "
           "read to write token t + 1, over the prompt and the tokens it wrote itself."), "generate:generate_record",
        _whole("max_new", 24, 1, 256, N_("Tokens to write (N)"), N_("how many tokens the model writes after the prompt")),
        o.Option("temperature", "float", default=0.0, low=0.0, high=2.0, step=0.05, label=N_("Temperature (0 = greedy)"),
                 help=N_("0 = greedy (always the most probable token); higher = more varied")),
        _whole("top_k", 0, 0, 100, N_("Top-k (0 = all)"), N_("sample only among the k most probable tokens (0 = all)")),
        o.SEED.with_(help=N_("seed of the sampling")), example={"max_new": 8}),
    _lm("neuron", N_("Neuron view: inside one attention score"),
        f"{_BERTVIZ}; Vaswani et al. (2017), Attention Is All You Need",
        r"s_j = \frac{1}{\sqrt{d}} \sum_{c=1}^{d} q_c\, k_{j,c},\quad \alpha_j = \operatorname{softmax}_j(s_j + M_{ij})",
        N_("For one query token in one layer and head: the query and key vectors (after RoPE where there "
           "is one), their elementwise product, its scaled sum and the softmax over the keys."), "neuron:neuron_record",
        _whole("layer", 0, 0, 1_000, N_("Layer"), N_("the layer (from 0)")),
        _whole("head", 0, 0, 1_000, N_("Head"), N_("the query head (from 0)")),
        _whole("position", -1, -512, 2_047, N_("Query position"),
               N_("the query token's position (from 0; -1 = the last token)")),
        sized=False, example={"layer": 1, "head": 0}),
    _lm("logit-lens", N_("Logit lens: each layer's guess of the next token"),
        "nostalgebraist (2020), interpreting GPT: the logit lens",
        r"p^{(l)}_t = \operatorname{softmax}\!\left(W_U\, \operatorname{norm}_f(h^{(l)}_t)\right)",
        N_("Every layer's residual stream read through the final norm and the unembedding: its top "
           "next tokens at a chosen position, and the probability of the model's final answer."), "lens:lens_record",
        _whole("position", -1, -512, 511, N_("Position"),
               N_("the position whose next token is read (from 0; -1 = the last token)")),
        _whole("top_k", 5, 1, 20, N_("Top k"), N_("how many top tokens each layer shows"))),
    _lm("knockout", N_("Head knock-out"), "Michel, Levy & Neubig (2019), Are Sixteen Heads Really Better than One?; "
        "Wang et al. (2023), Interpretability in the Wild (path patching)",
        r"\Delta p = p(x_{t+1} \mid \text{heads } S \text{ knocked out}) - p(x_{t+1})",
        N_("Knock chosen heads out (zero their output, or point their attention at the first token) and "
           "measure the change in the next-token probability and the prompt's loss; or every head alone."),
        "knockout:knockout_record",
        o.Option("heads", "text", default="", max_chars=2_000, label=N_("Heads"),
                 help=N_("the heads to knock out as layer.head, e.g. 0.1,1.3 (default: none)")),
        o.Option("mode", "choice", default="zero", choices=(N_("zero"), N_("first")), label=N_("Knock-out"),
                 help=N_("zero: the head's output is set to zero; first: its attention is put on the first token")),
        o.Option("sweep", "choice", default="no", choices=(N_("no"), N_("yes")), label=N_("All heads"),
                 help=N_("yes: knock out every head alone, the layer × head grid"))),
    Mechanism(
        id="flow", name=N_("Information flow routes"), family="lm", variant="flow", page=pages.INSIDE_LM.file,
        paper="Ferrando & Voita (2024), Information Flow Routes; Tufanov et al. (2024), LLM Transparency Tool",
        formula=r"w(p) = \frac{\max(0,\ \lVert y \rVert_1 - \lVert y - p \rVert_1)}"
                r"{\sum_{p'} \max(0,\ \lVert y \rVert_1 - \lVert y - p' \rVert_1)}",
        summary=N_("Every sum in the residual stream split into its parts (each token through each head, the "
                   "residual, the feed-forward network), each weighed by how much of the sum it makes, and the "
                   "route traced back from one prediction through the edges above a threshold, in one forward pass."),
        builder="models.flow.records:flow_record",
        options=(_TEXT, _FOLDER,
                 o.Option("threshold", "float", default=0.04, low=0.0, high=1.0, step=0.01, label=N_("Threshold"),
                          help=N_("an edge is kept when its weight is above this (0 keeps every edge)")),
                 _whole("position", -1, -512, 511, N_("Prediction"),
                        N_("the position whose prediction is traced back (from 0; -1 = the last token)"))),
        example=_EXAMPLE),
)
