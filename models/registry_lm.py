"""The registry's decoder language model entries: causal self-attention (pages.LANGUAGE_MODEL) and
what happens inside the model (pages.INSIDE_LM: generation, neuron view, logit lens, head knock-out).

models/registry.py appends LM_MECHANISMS to MECHANISMS; the entries follow the rules written there.
"""

from __future__ import annotations

from models import options as o
from models import pages
from models.entry import Mechanism
from models.text import N_

LM_MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism(
        id="lm",
        name=N_("Causal self-attention in a decoder language model"),
        paper="Radford et al. (2019), Language Models are Unsupervised Multitask Learners (GPT-2); "
        "Touvron et al. (2023), LLaMA",
        formula=r"\alpha^{(l,h)} = \operatorname{softmax}\!\left(\frac{Q_h K_{g(h)}^\top}{\sqrt{d}} + M\right),"
        r"\ M_{ij} = -\infty \text{ for } j > i,\quad g(h) = \lfloor h / G \rfloor",
        page=pages.LANGUAGE_MODEL.file,
        summary=N_("Every token of a GPT-style model attends to itself and the tokens before it: the GPT trained "
                   "here, or your own GPT-2, Llama, Mistral or Qwen folder."),
        family="lm", builder="models.lm.records:lm_record", record_size="models.lm.records:lm_record_size",
        options=(
            o.TEXT.with_(max_chars=20_000),
            o.MODEL_DIR.with_(help=N_("a local Hugging Face-format GPT-2, Llama, Mistral or Qwen folder "
                                      "(default: the GPT trained here, checkpoints/lm)")),
            o.Option("layers", "text", max_chars=200, label=N_("Layers"),
                     help=N_("which layers' maps to keep, e.g. 0-3 or 0,5,11 (default: all)")),
        ),
        example={"text": "The cat sat on the mat. The cat sat on the"},
    ),
)

# ------------------------------------------------------------------ inside a language model (pages.INSIDE_LM)

_LM_TEXT = o.TEXT.with_(max_chars=20_000)
_LM_FOLDER = o.MODEL_DIR.with_(help=N_("a local Hugging Face-format GPT-2, Llama, Mistral or Qwen folder "
                                       "(default: the GPT trained here, checkpoints/lm)"))
_LM_EXAMPLE = {"text": "The cat sat on the mat. The cat sat on the"}

LM_MECHANISMS = LM_MECHANISMS + (
    Mechanism(
        id="lm-generate",
        name=N_("Attention over the tokens a language model writes"),
        paper="Radford et al. (2019), Language Models are Unsupervised Multitask Learners (GPT-2); "
        "Vig (2019), A Multiscale Visualization of Attention in the Transformer Model (BertViz)",
        formula=r"x_{t+1} \sim \operatorname{softmax}(z_t / \tau)\ \text{(top-}k\text{)},\quad "
        r"\alpha^{(l,h)}_{t} = \operatorname{softmax}\!\left(\frac{q_t K_{\le t}^\top}{\sqrt{d}}\right)",
        page=pages.INSIDE_LM.file,
        summary=N_("The model writes N tokens after a prompt, with a KV cache; row t of each map is what each head "
                   "read to write token t + 1, over the prompt and the tokens it wrote itself."),
        family="lm", variant="generate", builder="models.lm.generate:generate_record",
        record_size="models.lm.generate:generate_record_size",
        options=(
            _LM_TEXT, _LM_FOLDER,
            o.Option("max_new", "int", default=24, low=1, high=256, step=1, label=N_("Tokens to write (N)"),
                     help=N_("how many tokens the model writes after the prompt")),
            o.Option("temperature", "float", default=0.0, low=0.0, high=2.0, step=0.05,
                     label=N_("Temperature (0 = greedy)"),
                     help=N_("0 = greedy (always the most probable token); higher = more varied")),
            o.Option("top_k", "int", default=0, low=0, high=100, step=1, label=N_("Top-k (0 = all)"),
                     help=N_("sample only among the k most probable tokens (0 = all)")),
            o.SEED.with_(help=N_("seed of the sampling")),
        ),
        example={**_LM_EXAMPLE, "max_new": 8},
    ),
    Mechanism(
        id="lm-neuron",
        name=N_("Neuron view: inside one attention score"),
        paper="Vig (2019), A Multiscale Visualization of Attention in the Transformer Model (BertViz); "
        "Vaswani et al. (2017), Attention Is All You Need",
        formula=r"s_j = \frac{1}{\sqrt{d}} \sum_{c=1}^{d} q_c\, k_{j,c},\quad \alpha_j = \operatorname{softmax}_j(s_j + M_{ij})",
        page=pages.INSIDE_LM.file,
        summary=N_("For one query token in one layer and head: the query and key vectors (after RoPE where there "
                   "is one), their elementwise product, its scaled sum and the softmax over the keys."),
        family="lm", variant="neuron", builder="models.lm.neuron:neuron_record",
        options=(
            _LM_TEXT, _LM_FOLDER,
            o.Option("layer", "int", default=0, low=0, high=1_000, step=1, label=N_("Layer"),
                     help=N_("the layer (from 0)")),
            o.Option("head", "int", default=0, low=0, high=1_000, step=1, label=N_("Head"),
                     help=N_("the query head (from 0)")),
            o.Option("position", "int", default=-1, low=-512, high=2_047, step=1, label=N_("Query position"),
                     help=N_("the query token's position (from 0; -1 = the last token)")),
        ),
        example={**_LM_EXAMPLE, "layer": 1, "head": 0},
    ),
    Mechanism(
        id="lm-logit-lens",
        name=N_("Logit lens: each layer's guess of the next token"),
        paper="nostalgebraist (2020), interpreting GPT: the logit lens",
        formula=r"p^{(l)}_t = \operatorname{softmax}\!\left(W_U\, \operatorname{norm}_f(h^{(l)}_t)\right)",
        page=pages.INSIDE_LM.file,
        summary=N_("Every layer's residual stream read through the final norm and the unembedding: its top "
                   "next tokens at a chosen position, and the probability of the model's final answer."),
        family="lm", variant="logit-lens", builder="models.lm.lens:lens_record",
        record_size="models.lm.lens:lens_record_size",
        options=(
            _LM_TEXT, _LM_FOLDER,
            o.Option("position", "int", default=-1, low=-512, high=511, step=1, label=N_("Position"),
                     help=N_("the position whose next token is read (from 0; -1 = the last token)")),
            o.Option("top_k", "int", default=5, low=1, high=20, step=1, label=N_("Top k"),
                     help=N_("how many top tokens each layer shows")),
        ),
        example=_LM_EXAMPLE,
    ),
    Mechanism(
        id="lm-knockout",
        name=N_("Head knock-out"),
        paper="Michel, Levy & Neubig (2019), Are Sixteen Heads Really Better than One?; "
        "Wang et al. (2023), Interpretability in the Wild (path patching)",
        formula=r"\Delta p = p(x_{t+1} \mid \text{heads } S \text{ knocked out}) - p(x_{t+1})",
        page=pages.INSIDE_LM.file,
        summary=N_("Knock chosen heads out (zero their output, or point their attention at the first token) and "
                   "measure the change in the next-token probability and the prompt's loss; or every head alone."),
        family="lm", variant="knockout", builder="models.lm.knockout:knockout_record",
        record_size="models.lm.knockout:knockout_record_size",
        options=(
            _LM_TEXT, _LM_FOLDER,
            o.Option("heads", "text", default="", max_chars=2_000, label=N_("Heads"),
                     help=N_("the heads to knock out as layer.head, e.g. 0.1,1.3 (default: none)")),
            o.Option("mode", "choice", default="zero", choices=(N_("zero"), N_("first")), label=N_("Knock-out"),
                     help=N_("zero: the head's output is set to zero; first: its attention is put on the first token")),
            o.Option("sweep", "choice", default="no", choices=(N_("no"), N_("yes")), label=N_("All heads"),
                     help=N_("yes: knock out every head alone, the layer × head grid")),
        ),
        example=_LM_EXAMPLE,
    ),
)
