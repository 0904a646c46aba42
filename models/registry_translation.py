"""The translation folders' side of the transformer-encoder|decoder|cross entries (models/registry.py
``_encdec``): the options they add and the builders that send an input to the date model trained here or,
with a model folder, to models/translation (Marian, T5, BART, mBART).

    cli.py export --mechanism transformer-cross --model-dir opus-mt-en-zh --text "The cat sat." [--target "猫坐着。"]

The registry sits above the families, so this module may import both (lazily, when a record is built).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from models import options as o
from models.model_folders import model_dir_option
from models.record import AttentionRecord, InputError
from models.text import N_

TRANSLATION_OPTIONS: tuple[o.Option, ...] = (
    o.MODEL_DIR.with_(
        help=N_(
            "a local Hugging Face translation folder: Marian (opus-mt), T5, BART or mBART "
            "(default: the date model trained here)"
        )
    ),
    o.Option(
        "target",
        "text",
        max_chars=2_000,
        label=N_("Target"),
        help=N_(
            "a translation to read with teacher forcing (with a model folder; default: the model's own greedy output)"
        ),
    ),
    o.Option(
        "max_new",
        "int",
        default=64,
        low=1,
        high=512,
        step=1,
        label=N_("Tokens to write"),
        help=N_("how many tokens greedy decoding writes at most (with a model folder)"),
    ),
)
BUILDER = "models.registry_translation:encdec_record"
BATCH_BUILDER = "models.registry_translation:encdec_records"


def _check(options: Mapping[str, Any]) -> bool:
    # Returns True for a translation folder's input; refuses options that belong to the other model.
    folder = model_dir_option(options) is not None
    if folder and options.get("step") is not None:
        raise InputError("--step picks a snapshot of the date model trained here; a model folder has none")
    if not folder and (options.get("target") or "").strip():
        raise InputError("--target is read by a translation folder's teacher forcing: give --model-dir too")
    return folder


def encdec_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder of transformer-encoder|decoder|cross: a model folder's record, else the date model's."""
    if _check(options):
        from models.translation.records import translation_record

        return translation_record(mechanism, options)
    from models.encdec.records import encdec_record as date_record

    return date_record(mechanism, options)


def encdec_records(mechanism, options_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
    """Registry batch builder: the date model's inputs as one batch, each model folder's one at a time."""
    from models.encdec.records import encdec_records as date_records
    from models.translation.records import translation_record

    folders = [_check(options) for options in options_list]
    dates = iter(
        date_records(mechanism, [opt for opt, f in zip(options_list, folders) if not f]) if not all(folders) else []
    )
    return [translation_record(mechanism, opt) if f else next(dates) for opt, f in zip(options_list, folders)]
