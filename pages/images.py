"""Hard vs soft attention on images: a captioner's per-word attention, and self-attention on any photo."""

import functools

import numpy as np
import streamlit as st

from models.captioner.patches import patch_grid, prepare_photo, scene_photo
from models.captioner.task import (
    COLOURS,
    MAX_OBJECT,
    MIN_OBJECT,
    SHAPES,
    SIZE,
    SceneObject,
    build_scene,
    random_scene,
    render_clean,
)
from models.image_input import fit_square, read_any_image
from models.model_folders import model_root
from models.registry import IMAGES, mechanisms_on_page
from ui.legend import HARD_LEGEND, PATCH_LEGEND, SOFT_LEGEND, symbol_legend
from ui.links import bound, linked_index, unlink
from ui.model_folder import model_folder
from ui.router import start_page
from ui.story import page_header
from ui.widgets import (
    checked,
    clicked_points,
    declared,
    index_or_none,
    option_number,
    option_radio,
    option_slider,
    show_figure,
    show_notice,
    show_panels,
    view_switch,
)
from viz.figures import png_data_uri
from viz.formulas import formula_lines
from viz.i18n_text import N_
from viz.images import caption_figure, captions_figure, patch_figure
from viz.vit import vit_heads_figure, vit_map_figure

_ = start_page()


# The patch view's first τ. On the built scene, from the centre patch, τ = 0.1 gives a nearly even α
# (largest 0.020, smallest 0.009 over 64 patches, normalised entropy 0.997): one teal. At τ = 0.02 the
# largest weight is 47 times the smallest (0.047 and 0.001, entropy 0.95): the patches of the query's
# colour and side light up and the red circle's go dark, so moving τ up from there visibly flattens it.
PATCH_TAU = 0.02
UPLOAD_TYPES = ["png", "jpg", "jpeg", "gif", "bmp", "webp"]
MODEL_INPUT = 64
# The views: id (the URL's value, img_view) and name, shown translated (ui.widgets.view_switch).
VIEWS = {"captioner": N_("Captioner: soft vs hard"), "patches": N_("Self-attention on any photo")}
if model_root() is not None:  # a user's ViT folder needs the operator's model root (ui/model_folder.py)
    VIEWS["vit"] = N_("Your vision transformer")
VIT_FOLDER = (
    N_("A ViT, DeiT, DINO or DINOv2 folder under the model root (config.json, model.safetensors, "
       "preprocessor_config.json)"),
    N_("a folder name, e.g. dinov2-small"),
)
VIT_VIEWS = {"cls": N_("[CLS] attention per head"), "rollout": N_("Rollout"), "patch": N_("A patch's attention")}
VIT_QUERY = ("vit_row", "vit_col")
QUERY_PATCH = ("patch_row", "patch_col")
# The widgets' values are ids (the URL's); each is shown by its translated label.
SOURCE_LABELS = {"build": N_("Build a scene"), "random": N_("Random scene"), "upload": N_("Upload an image")}
SOURCES = list(SOURCE_LABELS)
SHOW_LABELS = {"both": N_("Soft and hard"), "soft": N_("Soft"), "hard": N_("Hard")}
VARIANT_LABELS = {"soft": N_("soft"), "hard": N_("hard")}
SHAPE_NAMES = {"circle": N_("circle"), "square": N_("square"), "triangle": N_("triangle")}
COLOUR_NAMES = {"red": N_("red"), "green": N_("green"), "blue": N_("blue"), "yellow": N_("yellow")}


page_header(IMAGES, _(
    "A small *Show, Attend and Tell* captioner (Xu et al., 2015), trained here on a world of "
    "shapes with known answers, writes a caption one word at a time and, for every word, "
    "chooses where to look on an 8×8 grid. **Soft** attention reads the α-weighted average of "
    "all cells (a smooth map); **hard** attention reads one cell drawn from α. Draw many samples "
    "and their frequencies converge to α."
))
mechanisms = {m.id: m for m in mechanisms_on_page(IMAGES.file)}
soft, hard, patches = mechanisms["soft"], mechanisms["hard"], mechanisms["patch-self-attention"]
vit = mechanisms["vit"]
# The two captioners' formulas sit here, outside the fragments below: a control reruns a fragment,
# and a formula inside one would be typeset again by the browser on every step (docs/PERFORMANCE.md,
# "The page").
for column, mechanism, legend in zip(st.columns(2, gap="large"), (soft, hard), (SOFT_LEGEND, HARD_LEGEND)):
    with column:
        st.markdown(f"**{_(mechanism.name)}**")
        # One clause per line, and the hard formula's gradient over two: in half the page it ran past the edge.
        st.latex(formula_lines(mechanism.formula).replace(r"+ \lambda_r", r"\\ {}+ \lambda_r", 1))
        symbol_legend(legend)


@st.cache_data(max_entries=64, show_spinner=False)
def decode_upload(data: bytes) -> np.ndarray:
    return read_any_image(data)


@st.cache_data(max_entries=256, show_spinner=False)
def caption(mechanism_id: str, image: np.ndarray, settings: dict):
    return mechanisms[mechanism_id].build({"image": image, **settings})


def _fit(key: str, size_key: str) -> None:
    # on_change of a position slider: a position past the edge for this size moves back inside,
    # and the slider shows where the object went.
    top = SIZE - st.session_state.get(size_key, MIN_OBJECT)
    if st.session_state.get(key, 0) > top:
        st.session_state[key] = top


def position_slider(label: str, key: str, size_key: str, start: int, size: int) -> int:
    """Returns an object's left or top edge (px) from a slider of fixed range 0…SIZE − MIN_OBJECT.

    A slider whose range changed is a new widget to the browser, which would mount x and y anew
    on every Size step (~25 ms of a 200 ms round trip: docs/PERFORMANCE.md, "The page"). So the range stays,
    and a position a larger object no longer fits is moved inside: before the slider is drawn
    (a Size step) or in its own callback (a drag past the edge)."""
    top = SIZE - size
    if st.session_state.get(key, 0) > top:
        st.session_state[key] = top
    value = bound(st.slider, label, 0, SIZE - MIN_OBJECT, min(start, top), key=key,
                  on_change=_fit, args=(key, size_key))
    if value > top:  # only a link's value can still be past the edge here
        st.caption(_("{axis} = {value} puts a {size} px object past the edge; it is drawn at {top}.").format(
            axis=key.split("_")[1], value=value, size=size, top=top))
    return min(value, top)


def scene_builder() -> np.ndarray:
    count = bound(st.radio, _("Objects"), [1, 2], horizontal=True, key="build_count")
    objects = []
    defaults = [("circle", "red", 8, 20), ("square", "blue", 38, 22)]
    for i in range(count):
        shape0, colour0, x0, y0 = defaults[i]
        with st.expander(_("Object {number}").format(number=i + 1), expanded=i == 0):
            # One below the other: side by side, the narrow source column cut both names to a letter.
            # Pills, not select boxes: one click, and the browser sends the change
            # some 20 ms sooner than a select box's menu does (docs/PERFORMANCE.md, "The page").
            shape = bound(st.pills, _("Shape"), SHAPES, default=shape0, required=True, key=f"build_shape_{i}",
                          format_func=lambda name: _(SHAPE_NAMES.get(name, name)))
            colour = bound(st.pills, _("Colour"), COLOURS, default=colour0, required=True,
                           key=f"build_colour_{i}", format_func=lambda name: _(COLOUR_NAMES.get(name, name)))
            size = bound(st.slider, _("Size (px)"), MIN_OBJECT, MAX_OBJECT, 18, key=f"build_size_{i}")
            x, y = (position_slider(label, f"build_{axis}_{i}", f"build_size_{i}", start, size)
                    for axis, label, start in (("x", _("x (left edge)"), x0), ("y", _("y (top edge)"), y0)))
            objects.append(SceneObject(shape, colour, x, y, size))
    scene = checked(build_scene, objects)
    st.caption(_("True caption: {caption}").format(caption=scene.caption))
    return render_clean(scene)


def image_source() -> tuple[np.ndarray, np.ndarray]:
    """Returns (model input [64, 64, 3], full-resolution photo for the patch view)."""
    source = bound(
        st.radio, _("Image"), SOURCES, horizontal=True, key="image_source",
        format_func=lambda source: _(SOURCE_LABELS[source]),
    )
    # Each choice's controls sit in a container of their own key: a switch of the choice replaces
    # one container by the other rather than matching the controls of one to the other place by place.
    # It keeps each choice's layout apart; it buys no measurable time (bench/ui_latency.py, paired).
    if source == SOURCES[0]:
        with st.container(key="image_builder"):
            image = scene_builder()
        return image, scene_photo(image)
    if source == SOURCES[1]:
        with st.container(key="image_random"):
            seed = bound(st.number_input, _("Scene seed"), 0, 2**31 - 1, 7, key="scene_seed")
            scene = random_scene(np.random.default_rng(int(seed)))
            st.caption(_("True caption: {caption}").format(caption=scene.caption))
        image = render_clean(scene)
        return image, scene_photo(image)
    upload = st.file_uploader(
        _("PNG or JPEG (checked by content; at most 10 MB and 40 megapixels)"), type=UPLOAD_TYPES, key="upload"
    )
    if upload is None:
        st.info(_("Upload an image to caption it. The model only knows circles, squares and triangles in four colours."))
        st.stop()
    photo = checked(decode_upload, upload.getvalue())
    return fit_square(photo, MODEL_INPUT), photo


# Its own fragment (st.fragment), inside image_views: the captioner's controls rerun only this view;
# a new image (the scene controls, an upload) reruns image_views, which hands it down as the argument.
@st.fragment
def caption_view(image: np.ndarray) -> None:
    """The captioner view: soft and hard attention panels of each caption word, in one figure."""
    # The seed's column keeps its number box over 120 px from 1280 px screens up: below that Streamlit
    # hides the box's − and + buttons.
    show_col, tau_col, samples_col, seed_col, mode_col = st.columns([2, 2, 2, 2.3, 2], vertical_alignment="bottom")
    show = bound(show_col.radio, _("Show"), list(SHOW_LABELS), horizontal=True, key="show",
                 format_func=lambda choice: _(SHOW_LABELS[choice]))
    with tau_col:
        temperature = option_slider(hard.option("temperature"), key="cap_temperature")
    with samples_col:
        samples = option_slider(hard.option("samples"), key="cap_samples")
    with seed_col:
        seed = int(option_number(hard.option("seed"), key="cap_seed"))
    with mode_col:
        mode = option_radio(hard.option("mode"), key="cap_mode", horizontal=True,
                            labels={"sample": _("a sampled cell"), "argmax": _("the argmax cell")})
    settings = {"temperature": temperature, "samples": samples, "seed": seed, "mode": mode}
    shown = {"both": [soft, hard], "soft": [soft], "hard": [hard]}[show]
    records = []
    with st.spinner(_("Captioning…")):  # one spinner (a timer thread) for both captioners
        for mechanism in shown:
            own = declared(mechanism, settings) if mechanism is hard else {}  # soft reads Σ α a at τ = 1
            record = checked(caption, mechanism.id, image, own, stop=False)
            if record is not None:
                st.markdown(_("**Caption:** {caption} · *{variant}*").format(caption=record.extras["caption"],
                                                                         variant=_(VARIANT_LABELS[mechanism.variant])))
                records.append((mechanism, record))
    if not records:
        return
    for notice in next((r.meta["notices"] for _m, r in records if r.meta.get("notices")), []):  # once per image
        show_notice(notice, icon=":material/help:")
    # Both captioners' panels are one figure (a scene change redraws one figure, not two), each block
    # on its own colour scale; each keeps its own Export menu with its own record and figure, built
    # only when an image is exported.
    panels = [(functools.partial(caption_figure, image, record, gettext=_), record, f"export_{mechanism.id}",
               f"caption-{mechanism.id}", _("Export {variant}").format(variant=_(VARIANT_LABELS[mechanism.variant]))) for mechanism, record in records]
    show_panels(captions_figure(image, [record for _m, record in records], gettext=_), panels, chart_key="caption_panels",
                width="stretch")


def clicked_query(grid_h: int, grid_w: int, prefix: str) -> tuple[int, int]:
    """Returns the query patch (row, column) of the picture whose chart key is `{prefix}_chart`: the boxes
    `{prefix}_row` and `{prefix}_col`, set by a click on the picture."""
    clicked = clicked_points(st.session_state.get(f"{prefix}_chart"), curve=2)
    if clicked and "customdata" in clicked[0] and st.session_state.get(f"{prefix}_clicked") != clicked[0]["customdata"]:
        # A browser's click on a patch sends that patch's number; anything else (a scripted client's)
        # is ignored, with one line, and the boxes keep their patch.
        index = index_or_none(clicked[0]["customdata"], grid_h * grid_w)
        if index is None:
            st.caption(_("That click named no patch of this grid; the query patch stays where it was."))
        else:
            st.session_state[f"{prefix}_clicked"] = index
            st.session_state[f"{prefix}_row"], st.session_state[f"{prefix}_col"] = divmod(index, grid_w)
    row_col, col_col = st.columns(2)
    # Always in the URL (ui.links.linked_index): their default, the grid's centre, moves with the patch size.
    row = linked_index(row_col.number_input, _("Query patch row"), grid_h - 1, grid_h // 2, key=f"{prefix}_row")
    col = linked_index(col_col.number_input, _("Query patch column"), grid_w - 1, grid_w // 2, key=f"{prefix}_col")
    return row, col


def query_patch(grid_h: int, grid_w: int) -> tuple[int, int]:
    """Returns the patch view's query patch (row, column), kept inside a grid that a larger patch shrank."""
    for name, top in (("patch_row", grid_h - 1), ("patch_col", grid_w - 1)):
        if st.session_state.get(name, 0) > top:
            st.session_state[name] = top
    return clicked_query(grid_h, grid_w, "patch")


def patch_view(photo: np.ndarray) -> None:
    """The patch view: parameter-free self-attention of one query patch over the photo."""
    st.markdown(_(
        "**Self-attention with no learned weights (Q = K = V).** The photo is cut into square "
        "patches; each patch is described by its mean colour and its position (centred). One query "
        "patch scores every patch by the scaled dot product, and a softmax turns the scores into α."
    ))
    st.latex(patches.formula)
    symbol_legend(PATCH_LEGEND)
    st.caption(_(
        "What it shows: how a dot product turns similarity into a distribution, and how temperature "
        "and the choice of features decide what counts as similar. What it does not show: anything "
        "learned. There are no weights and no semantics: a red car and a red wall look the same here."
    ))
    size_col, query_col, tau_col, mode_col = st.columns([2, 3, 2, 3], vertical_alignment="bottom")
    with size_col:
        patch = option_slider(patches.option("patch"), key="patch_size")
    grid_h, grid_w = checked(patch_grid, photo, patch)
    with query_col:
        row, col = query_patch(grid_h, grid_w)
    with tau_col:
        temperature = option_slider(patches.option("temperature"), key="patch_temperature", value=PATCH_TAU)
    with mode_col:
        mode = option_radio(patches.option("mode"), key="patch_mode", horizontal=True,
                            labels={"soft": _("soft"), "argmax": _("hard: argmax"), "sample": _("hard: sampled")})
    values = {"patch": patch, "query_patch": (row, col), "temperature": temperature, "mode": mode}
    # Drawn whatever the mode, greyed out unless it samples, as the Playground's: a mode change
    # changes their state rather than mounting them, and the picture below does not move.
    samples_col, seed_col, _rest = st.columns([2, 2, 3])
    with samples_col:
        samples = option_slider(patches.option("samples"), key="patch_samples", disabled=mode != "sample")
    with seed_col:
        seed = int(option_number(patches.option("seed"), key="patch_seed", disabled=mode != "sample"))
    if mode == "sample":
        values.update(samples=samples, seed=seed)
    st.caption(_("Click a patch in the picture to make it the query."))
    cropped = prepare_photo(photo, patch)
    record = checked(patches.build, {"image": cropped, **values})
    qr, qc = record.meta["query"]
    if mode == "sample":  # the record's weights count draws: said in the caption, the figure and the file name
        st.caption(_("Hard, sampled: the colours are sample frequencies, the share of the {samples} draws that fell "
                     "on each patch (crosses: how often), not α itself. With more samples they approach α.").format(
                         samples=samples))
        title, name = _("Patch r{row}c{col}: frequency of {samples} samples"), "patch-self-attention-sample-frequencies"
    else:
        title, name = _("Patch r{row}c{col} attends to…"), "patch-self-attention"
    show_figure(patch_figure(cropped, record, title=title.format(row=qr, col=qc, samples=samples), gettext=_), record,
                key="export_patch", chart_key="patch_chart", name=name,
                on_select="rerun", selection_mode=("points",), width="stretch")


def vit_view(photo: np.ndarray) -> None:
    """The user's vision transformer over the photo: each head's [CLS] map, rollout, a clicked patch's map."""
    st.markdown(_(
        "**A vision transformer you bring.** The photo is prepared as the folder's own image processor prepares it "
        "and cut into patches; every patch and the [CLS] token attend to all the others in every layer and head. "
        "DINO's heads light up the object from [CLS]; rollout follows attention through the layers. Circled "
        "patches are high-norm tokens (Darcet et al., 2024): the model uses them as scratch space."
    ))
    st.latex(vit.formula)
    st.caption(vit.citation(_))
    model_dir = model_folder(VIT_FOLDER, key="vit_model_dir")
    if not model_dir:
        unlink(*VIT_QUERY)
        st.info(_("Name a vision transformer folder above to see its attention over the photo."),
                icon=":material/folder_open:")
        return
    full = checked(vit.build, {"model_dir": model_dir, "image": photo})
    layers, heads = full.weights.shape[:2]
    rows, cols = full.meta["grid"]
    st.caption(_("{model} ({kind}): {layers} layers × {heads} heads, {rows} × {cols} patches of {size} px · "
                 "{count} high-norm patches (norm above {threshold:.1f})").format(
        model=full.meta["model"], kind=full.meta["model_type"], layers=layers, heads=heads, rows=rows, cols=cols,
        size=full.meta["patch_size"], count=full.meta["artifacts"], threshold=full.meta["artifact_threshold"]))
    kind_col, layer_col, head_col = st.columns([3, 2, 2])
    with kind_col:
        kind = bound(st.radio, _("Show"), list(VIT_VIEWS), format_func=lambda v: _(VIT_VIEWS[v]), horizontal=True,
                     key="vit_show")
    with layer_col:
        layer = bound(st.slider, _("Layer"), 0, layers - 1, layers - 1, key="vit_layer", disabled=kind == "rollout")
    with head_col:
        head = bound(st.slider, _("Head"), 0, heads - 1, 0, key="vit_head", disabled=kind == "rollout")
    query = clicked_query(rows, cols, "vit") if kind == "patch" else None
    if kind == "patch":
        st.caption(_("Click a patch in the picture to make it the query."))
    else:
        unlink(*VIT_QUERY)
    record = checked(vit.build, {"model_dir": model_dir, "image": photo, "view": kind, "query_patch": query or (0, 0)})
    titles = {"cls": _("[CLS] attends to… (layer {layer}, head {head})"), "rollout": _("Rollout from [CLS]"),
              "patch": _("Patch {query} attends to… (layer {layer}, head {head})")}
    title = titles[kind].format(layer=layer, head=head, query=record.query_labels[0])
    show_figure(vit_map_figure(record, layer=layer, head=head, title=title, gettext=_), record, key="export_vit",
                chart_key="vit_chart", name=f"vit-{kind}", on_select="rerun", selection_mode=("points",),
                width="stretch")
    if kind == "cls":
        show_figure(vit_heads_figure(record, layer=layer, title=_("Every head of layer {layer}").format(layer=layer),
                                     gettext=_), record, key="export_vit_heads", name="vit-cls-heads")


# The source and the views are one fragment (st.fragment): a scene control reruns them, not the
# router, the sidebar and the text above; the captioner's own controls rerun only its fragment
# inside (docs/PERFORMANCE.md, "The page").
@st.fragment
def image_views() -> None:
    source_col, views_col = st.columns([1, 4], gap="large")
    with source_col:
        image, photo = image_source()
        # Inline (a data URI), not a media file: the browser draws it from the message, with no
        # request of its own, and the server keeps no file per session.
        st.image(png_data_uri(image, compress_level=1), caption=_("Model input (64×64)"), width=160)
    with views_col:
        views(image, photo)


# The views and their switch are a fragment inside image_views: picking a view reruns only them, not
# the source column (docs/PERFORMANCE.md, "The page"). A new image reruns image_views, which
# calls this again with it.
@st.fragment
def views(image: np.ndarray, photo: np.ndarray) -> None:
    view = view_switch(VIEWS, key="img_view")
    if view != "patches":
        unlink(*QUERY_PATCH)  # the patch view's query, kept in the URL while that view shows
    if view != "vit":
        unlink(*VIT_QUERY)
    if view == "captioner":
        caption_view(image)
    elif view == "vit":
        vit_view(photo)
    else:
        patch_view(photo)


image_views()
