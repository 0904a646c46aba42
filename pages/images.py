"""Hard vs soft attention on images: a captioner's per-word attention, and self-attention on any photo."""

import numpy as np
import streamlit as st

from models.captioner.records import MAX_SAMPLES, caption_image, caption_record
from models.image_input import fit_square, read_any_image
from models.captioner.patches import PATCH_RANGE, patch_attention, patch_result_record, prepare_photo
from models.record import InputError
from models.registry import IMAGES, mechanisms_on_page
from models.captioner.task import (
    COLOURS,
    MAX_OBJECT,
    MIN_OBJECT,
    SHAPES,
    SIZE,
    SceneObject,
    make_scene,
    random_scene,
    render_clean,
)
from ui.router import ensure_router
from ui.widgets import export_buttons, show_input_error
from viz.images import caption_panels, patch_attention_figure

ensure_router()

UPLOAD_TYPES = ["png", "jpg", "jpeg", "gif", "bmp", "webp"]

st.title("Hard vs soft attention (images)")
st.markdown(
    "A small *Show, Attend and Tell* captioner (Xu et al., 2015), trained here on a world of "
    "shapes with known answers, writes a caption one word at a time and, for every word, "
    "chooses where to look on an 8×8 grid. **Soft** attention reads the α-weighted average of "
    "all cells (a smooth map); **hard** attention reads one cell drawn from α. Draw many samples "
    "and their frequencies converge to α."
)
mechanisms = {m.id: m for m in mechanisms_on_page(IMAGES.file)}


@st.cache_data(max_entries=64, show_spinner=False)
def decode_upload(data: bytes) -> np.ndarray:
    return read_any_image(data)


@st.cache_data(max_entries=256, show_spinner=False)
def run_captioner(image: np.ndarray, variant: str, mode: str, temperature: float, samples: int, seed: int):
    return caption_image(image, variant, mode=mode, temperature=temperature, samples=samples, seed=seed)


def scene_builder() -> np.ndarray:
    count = st.radio("Objects", [1, 2], horizontal=True, key="build_count")
    objects = []
    defaults = [("circle", "red", 8, 20), ("square", "blue", 38, 22)]
    for i in range(count):
        shape0, colour0, x0, y0 = defaults[i]
        with st.expander(f"Object {i + 1}", expanded=i == 0):
            a, b = st.columns(2)
            shape = a.selectbox("Shape", SHAPES, SHAPES.index(shape0), key=f"build_shape_{i}")
            colour = b.selectbox("Colour", COLOURS, COLOURS.index(colour0), key=f"build_colour_{i}")
            size = st.slider("Size (px)", MIN_OBJECT, MAX_OBJECT, 18, key=f"build_size_{i}")
            x = st.slider("x (left edge)", 0, SIZE - size, min(x0, SIZE - size), key=f"build_x_{i}")
            y = st.slider("y (top edge)", 0, SIZE - size, min(y0, SIZE - size), key=f"build_y_{i}")
            objects.append(SceneObject(shape, colour, x, y, size))
    try:
        scene = make_scene(objects)
    except ValueError as error:
        raise InputError(f"{error}; move or shrink an object") from None
    st.caption(f"True caption: {scene.caption}")
    return render_clean(scene)


def image_source() -> tuple[np.ndarray, np.ndarray]:
    """Returns (model input [64, 64, 3], full-resolution photo for the patch tab)."""
    source = st.radio(
        "Image", ["Build a scene", "Random scene", "Upload an image"], horizontal=True, key="image_source"
    )
    if source == "Build a scene":
        image = scene_builder()
        return image, np.kron(image, np.ones((4, 4, 1), np.uint8))
    if source == "Random scene":
        seed = st.number_input("Scene seed", 0, 2**31 - 1, 7, key="scene_seed")
        scene = random_scene(np.random.default_rng(int(seed)))
        st.caption(f"True caption: {scene.caption}")
        image = render_clean(scene)
        return image, np.kron(image, np.ones((4, 4, 1), np.uint8))
    upload = st.file_uploader(
        "PNG or JPEG (checked by content; at most 10 MB and 40 megapixels)", type=UPLOAD_TYPES, key="upload"
    )
    if upload is None:
        st.info("Upload an image to caption it. The model only knows circles, squares and triangles in four colours.")
        st.stop()
    photo = decode_upload(upload.getvalue())
    return fit_square(photo, SIZE), photo


def variant_figure(result, image: np.ndarray, mode: str, samples: int):
    words = list(result.words)
    if result.variant == "soft":
        return caption_panels(image, words, [("α (soft)", result.alphas)], smooth=[True], title=f"Soft: “{result.caption}”")
    rows = [("α", result.alphas), (f"frequency of {samples} samples", result.frequencies())]
    picked = "sampled" if mode == "sample" else "argmax"
    return caption_panels(
        image, words, rows, smooth=[False, False], marks=[result.decode_cells, None],
        title=f"Hard ({picked} cell outlined): “{result.caption}”",
    )


tab_caption, tab_patch = st.tabs(["Captioner: soft vs hard", "Self-attention on any photo"])

with tab_caption:
    controls, output = st.columns([1, 3], gap="large")
    with controls:
        try:
            image, photo = image_source()
        except InputError as error:
            show_input_error(error)
            st.stop()
        st.image(image, caption="Model input (64×64)", width=160)
        show = st.radio("Show", ["Soft and hard", "Soft", "Hard"], horizontal=True, key="show")
        temperature = st.slider("Temperature τ (hard)", 0.1, 5.0, 1.0, 0.1, key="cap_temperature",
                                help="α = softmax(e/τ) for the hard model: low τ sharpens where it samples.")
        samples = st.slider("Samples N per word", 1, min(MAX_SAMPLES, 2000), 20, key="cap_samples",
                            help="Locations drawn from α for each word; their frequencies converge to α.")
        seed = st.number_input("Seed", 0, 2**31 - 1, 0, key="cap_seed")
        mode = st.radio("Hard decoder reads", ["sample", "argmax"], horizontal=True, key="cap_mode",
                        format_func={"sample": "a sampled cell", "argmax": "the argmax cell"}.get)
    with output:
        variants = {"Soft and hard": ["soft", "hard"], "Soft": ["soft"], "Hard": ["hard"]}[show]
        # Stacked at full width (one panel row per variant), so eight word panels stay readable.
        for variant in variants:
            with st.container(border=True):
                mechanism = mechanisms[variant]
                st.subheader(mechanism.name)
                st.latex(mechanism.formula)
                try:
                    with st.spinner("Captioning…"):
                        result = run_captioner(
                            image, variant, mode if variant == "hard" else "soft", temperature if variant == "hard" else 1.0,
                            samples if variant == "hard" else 0, int(seed),
                        )
                except InputError as error:
                    show_input_error(error)
                    continue
                st.markdown(f"**Caption:** {result.caption}")
                fig = variant_figure(result, image, mode, samples)
                st.plotly_chart(fig, key=f"panels_{variant}", width="stretch")
                options = {"temperature": temperature, "samples": samples, "seed": int(seed), "mode": mode}
                export_buttons(caption_record(result, options if variant == "hard" else {}), fig,
                               key=f"export_{variant}", name=f"caption-{variant}")

with tab_patch:
    st.markdown(
        "**Self-attention with no learned weights (Q = K = V).** The photo is cut into square "
        "patches; each patch is described by its mean colour and its position (centred). One query "
        "patch scores every patch by the scaled dot product, and a softmax turns the scores into α."
    )
    st.latex(r"x_j = [\bar r_j, \bar g_j, \bar b_j, \tfrac{row_j}{H}, \tfrac{col_j}{W}] - \overline{x},\qquad"
             r"\alpha_{qj} = \operatorname{softmax}_j\!\left(\frac{x_q^\top x_j}{\sqrt{d}\,\tau}\right)")
    st.caption(
        "What it shows: how a dot product turns similarity into a distribution, and how temperature "
        "and the choice of features decide what counts as similar. What it does not show: anything "
        "learned. There are no weights and no semantics: a red car and a red wall look the same here."
    )
    pc, pv = st.columns([1, 3], gap="large")
    with pc:
        patch = st.slider("Patch size (px)", PATCH_RANGE[0], PATCH_RANGE[1], 32, 4, key="patch_size")
        try:
            prepared = prepare_photo(photo, patch)
        except InputError as error:
            show_input_error(error)
            st.stop()
        grid_h, grid_w = prepared.shape[0] // patch, prepared.shape[1] // patch
        selection = st.session_state.get("patch_chart")
        points = (selection or {}).get("selection", {}).get("points", []) if isinstance(selection, dict) else []
        clicked = [p for p in points if p.get("curve_number") == 2 and "customdata" in p]
        if clicked and st.session_state.get("patch_clicked") != clicked[0]["customdata"]:
            index = int(clicked[0]["customdata"])
            st.session_state["patch_clicked"] = index
            st.session_state["patch_row"], st.session_state["patch_col"] = divmod(index, grid_w) if grid_w else (0, 0)
        for name, top in (("patch_row", grid_h - 1), ("patch_col", grid_w - 1)):
            if st.session_state.get(name, 0) > top:  # a larger patch shrank the grid
                st.session_state[name] = top
        row = st.number_input("Query patch row", 0, grid_h - 1, min(grid_h // 2, grid_h - 1), key="patch_row")
        col = st.number_input("Query patch column", 0, grid_w - 1, min(grid_w // 2, grid_w - 1), key="patch_col")
        st.caption("Or click a patch in the picture.")
        p_temperature = st.slider("Temperature τ", 0.01, 2.0, 0.1, 0.01, key="patch_temperature")
        p_mode = st.radio("Attention", ["soft", "argmax", "sample"], horizontal=True, key="patch_mode",
                          format_func={"soft": "soft", "argmax": "hard: argmax", "sample": "hard: sampled"}.get)
        p_samples = st.slider("Samples", 1, 2000, 50, key="patch_samples") if p_mode == "sample" else 50
    with pv:
        try:
            result = patch_attention(photo, patch=patch, query=(int(row), int(col)), temperature=p_temperature,
                                     mode=p_mode, samples=p_samples, seed=int(seed))
            record = patch_result_record(result, temperature=p_temperature, mode=p_mode)
        except InputError as error:
            show_input_error(error)
            st.stop()
        pfig = patch_attention_figure(result.image, result.weights, result.query, samples=result.samples,
                                      title=f"Patch r{result.query[0]}c{result.query[1]} attends to…")
        st.plotly_chart(pfig, key="patch_chart", on_select="rerun", selection_mode=("points",), width="stretch")
        export_buttons(record, pfig, key="export_patch", name="patch-self-attention")
