"""Many inputs: per-head attention statistics of MiniLM over a corpus, and one head's joint query–key plane."""

import hashlib

import numpy as np
import streamlit as st

from models.corpus import qk
from models.corpus import run as corpus
from models.corpus.heads import DESCRIPTIONS, LABELS, STATISTIC_IDS
from models.corpus.texts import MAX_UPLOAD_BYTES, MAX_UPLOAD_TEXTS, csv_header, sample_texts, upload_text, upload_texts
from models.registry import mechanism_of
from ui.router import ensure_router
from ui.widgets import checked, clicked_points, show_figure
from viz.corpus import COLOUR_BY, head_scatter, query_key_plane

ensure_router()
MECHANISM = mechanism_of("transformer", "self-attention").id


@st.cache_resource(show_spinner="Loading MiniLM…")
def _model():
    from models.transformer.records import load_runner

    return corpus.CorpusModel(load_runner())


@st.cache_data(show_spinner=False, max_entries=16)
def _embedding(digest: str, texts: tuple[str, ...], layer: int, head: int):
    del digest  # the cache key; texts is hashed too, but a digest keeps the key small to compare
    runner = _model().runner
    return qk.joint_embedding(qk.query_keys(runner, texts, layer, head))


st.title("Many inputs: head statistics")
st.markdown(
    "One sentence shows one attention map; what a head *does* shows across many. This page runs "
    "all-MiniLM-L6-v2 over a corpus, one text per input, and gives every head the statistics the "
    "self-attention page computes for one input (entropy, previous-token, duplicate-token and induction "
    "scores, shares on [CLS] and [SEP], mean attention distance) as mean ± spread over the texts. "
    "Every head is then one point (HeadVis); a head's sharpest inputs are listed; and its queries and keys "
    "are drawn in one plane (AttentionViz, Yeh et al. 2023). Larger files: `cli.py corpus`.")

source = st.radio("Corpus", ["Bundled sample (60 sentences)", "Upload a .txt or .csv"], horizontal=True,
                  key="corpus_source")
texts = None
if source.startswith("Bundled"):
    texts = sample_texts()
else:
    upload = st.file_uploader(f"One text per line (.txt), or a CSV with a header row; at most "
                              f"{MAX_UPLOAD_BYTES / 1e6:.0f} MB and {MAX_UPLOAD_TEXTS:,} texts",
                              type=["txt", "csv"], key="corpus_upload")
    if upload is not None:
        content = checked(upload_text, upload.getvalue())
        column = None
        if upload.name.lower().endswith(".csv"):
            header = checked(csv_header, content)
            column = st.selectbox("Text column", header, key="corpus_column")
        texts = checked(upload_texts, content, column)
if not texts:
    st.info("Upload a file, or choose the bundled sample.")
    st.stop()

digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
done = st.session_state.get("corpus_stats")
ran_on = st.session_state.get("corpus_digest")
cols = st.columns([1, 1, 4])
# on_click: the request survives the router's reruns (a button's own value lasts one run only)
cols[0].button("Run", type="primary", key="corpus_run", help=f"{len(texts):,} texts",
               on_click=lambda: st.session_state.update(corpus_start=True))
cols[1].button("Stop", key="corpus_stop", help="ends the pass; the statistics of the texts that ran stay")
if st.session_state.pop("corpus_start", False):
    model = _model()
    stats = corpus.CorpusStats.empty(model.config.num_hidden_layers, model.config.num_attention_heads,
                                     model=model.runner.name)
    st.session_state.update(corpus_stats=stats, corpus_digest=digest, corpus_finished=False)
    bar = st.progress(0.0, text="Compiling…")
    corpus.corpus_statistics(texts, model, into=stats,
                             progress=lambda n: bar.progress(min(n / len(texts), 1.0), text=f"{n:,} of {len(texts):,} texts"))
    st.session_state["corpus_finished"] = True
    bar.empty()
    done, ran_on = stats, digest
if done is None or ran_on != digest:
    st.info(f"{len(texts):,} texts ready: press Run.")
    st.stop()
if not st.session_state.get("corpus_finished"):
    done.stopped = True
if done.count == 0:
    st.warning("Stopped before the first batch ran: no statistics yet. Press Run again.")
    st.stop()
st.caption(f"{done.count:,} texts, {done.tokens:,} tokens"
           + (f" ({done.skipped:,} empty skipped)" if done.skipped else "")
           + (" - stopped early: the statistics cover the texts that ran." if done.stopped else "."))

st.header("Every head by two statistics")
pick = st.columns(2)
x = pick[0].selectbox("x", STATISTIC_IDS, index=STATISTIC_IDS.index("entropy"), format_func=LABELS.get, key="corpus_x")
y = pick[1].selectbox("y", STATISTIC_IDS, index=STATISTIC_IDS.index("previous_score"), format_func=LABELS.get,
                      key="corpus_y")
st.caption(f"x: {DESCRIPTIONS[x]}. y: {DESCRIPTIONS[y]}. Each point is a head's mean over the texts; hover for the "
           "spread. Click a head to select it.")
layers, heads = done.mean.shape[:2]
selected = (int(st.session_state.get("corpus_layer", 0)), int(st.session_state.get("corpus_head", 0)))
state = show_figure(head_scatter(done.mean, done.std, done.statistics, LABELS, x, y, selected=selected),
                    corpus.stats_record(done, MECHANISM), key="corpus_heads", name="corpus_heads",
                    on_select="rerun", selection_mode="points")
for point in clicked_points(state):
    custom = point.get("customdata")
    if isinstance(custom, list) and len(custom) >= 2:
        layer, head = int(custom[0]), int(custom[1])
        if 0 <= layer < layers and 0 <= head < heads and (layer, head) != selected:
            st.session_state.update(corpus_layer=layer, corpus_head=head)
            st.rerun()

st.header("One head")
pick = st.columns(3)
layer = pick[0].selectbox("Layer", range(layers), key="corpus_layer")
head = pick[1].selectbox("Head", range(heads), key="corpus_head")
colour_by = pick[2].selectbox("Colour the plane by", COLOUR_BY, key="corpus_colour")
rows = [r for r in corpus.top_rows(done) if r["layer"] == layer and r["head"] == head]
st.subheader(f"L{layer}H{head}: where it attends most sharply")
st.dataframe([{"entropy (nats)": round(r["entropy"], 3), "input": r["input"] + 1, "text": r["text"]} for r in rows],
             hide_index=True, width="stretch")

st.subheader(f"L{layer}H{head}: queries and keys in one plane")
st.markdown(
    "Queries (filled) and keys (open) of every token of the first texts (up to "
    f"{qk.MAX_SAMPLE_TOKENS:,} tokens), normalised as AttentionViz does so that distance tracks attention: "
    "keys translated so that their mean is the queries' mean, k ← k − mean(k) + mean(q); then q ← c·q and "
    "k ← k/c with c = √(mean‖k‖ / mean‖q‖), so both have the same mean norm. Neither changes any attention "
    "map. Then PCA to two axes.")
embedding = checked(_embedding, digest, tuple(texts), int(layer), int(head))
sample = embedding.sample
fig = query_key_plane(embedding.query_xy, embedding.key_xy, sample.tokens, sample.contexts, sample.position,
                      np.linalg.norm(sample.queries, axis=1), np.linalg.norm(sample.keys, axis=1), colour_by=colour_by)
show_figure(fig, qk.embedding_record(embedding, MECHANISM), key="corpus_qk", name=f"corpus_qk_L{layer}H{head}")
st.caption(f"{len(sample.tokens):,} tokens of {int(sample.input.max()) + 1:,} texts; the two axes keep "
           f"{embedding.projection.explained.sum():.0%} of the variance; c = {embedding.normalisation.scale:.3f}.")
