"""Typed options: every value that reaches a model from a browser, a URL or the command line.

An ``Option`` declares one setting of a mechanism (models/registry.py): its name (the key a
builder reads, and the CLI flag ``--name``), its kind, its range or choices, its default and
a help line. ``Option.read`` turns a raw value (a CLI string, a widget value, a URL
parameter, or something a scripted client made up) into the typed value, or raises
InputError with one sentence that names what is allowed. Widget ranges are enforced only in
the browser; this is where they are enforced on the server.

The same name means the same thing in every family:
- ``temperature`` τ divides the scores before the softmax (smaller: sharper α);
- ``samples`` is how many locations hard attention draws from α;
- ``seed`` seeds every random draw of one request;
- ``mode`` is how α is used: soft (the expectation), argmax, or sample;
- ``window`` is a local window's half-width D;
- ``text`` is the input text, cut at ``max_chars`` with a notice (see ``cut_text``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.record import InputError
from models.text import N_, Notice

KINDS = ("float", "int", "choice", "text", "path", "image", "vector", "pair", "labels")
MAX_LABELS = 64
MAX_LABEL_CHARS = 40
MAX_TEXT_CHARS = 50_000  # text is cut here, on the server, before any tokenizer sees it
MAX_WORD_CHARS = 100  # a longer "word" is cut (models that read words keep memory bounded)


@dataclass(frozen=True)
class Option:
    """One declared setting of a mechanism.

    kind: "float", "int" (ranges low..high, inclusive), "choice" (one of choices), "text",
    "path" (a file or folder path), "image" (a path, bytes or a uint8 array), "vector"
    (numbers as "1,2; 3,4" or an array), "pair" (two whole numbers: "3,42", "r3c42" or a pair),
    "labels" (comma-separated text or a list of strings).
    default: the value when none is given (None: the builder decides, e.g. "no window").
    step: a widget's step; label: a widget's label (default: the help text).
    """

    name: str
    kind: str
    default: Any = None
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    help: str = ""
    label: str | None = None
    step: float | None = None
    max_chars: int = MAX_TEXT_CHARS
    required: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"option {self.name}: unknown kind {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"option {self.name}: a choice needs choices")
        if self.kind in ("float", "int") and (self.low is None or self.high is None):
            raise ValueError(f"option {self.name}: a number needs low and high")

    @property
    def flag(self) -> str:
        """Returns the command-line flag, e.g. --text-pair."""
        return "--" + self.name.replace("_", "-")

    @property
    def title(self) -> str:
        """Returns the widget label."""
        return self.label or self.help or self.name

    def with_(self, **changes: Any) -> Option:
        """Returns a copy with some fields changed (a family's own range or default)."""
        return dataclasses.replace(self, **changes)

    def read(self, value: Any) -> Any:
        """Returns the typed value, the default for None or ""; InputError if it is not allowed."""
        if value is None or (isinstance(value, str) and not value.strip() and self.kind != "text"):
            if self.required:
                raise InputError(f"give the {self.name.replace('_', ' ')} ({self.flag}): {self.help}")
            return self.default
        reader = _READERS[self.kind]
        return reader(self, value)

    def describe(self) -> str:
        """Returns what the option accepts, for help texts and messages."""
        if self.kind in ("float", "int"):
            return f"a {'number' if self.kind == 'float' else 'whole number'} from {_num(self.low)} to {_num(self.high)}"
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        return self.kind


def _num(x: float | None) -> str:
    if x is None:
        return "?"
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _read_float(option: Option, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{option.name} must be {option.describe()}, got {_shown(value)}") from None
    if not (math.isfinite(number) and option.low <= number <= option.high):
        raise InputError(f"{option.name} must be {option.describe()}, got {_shown(value)}")
    return number


def _read_int(option: Option, value: Any) -> int:
    if isinstance(value, bool):
        raise InputError(f"{option.name} must be {option.describe()}, got {_shown(value)}")
    try:
        number = float(value) if not isinstance(value, (int, np.integer)) else int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{option.name} must be {option.describe()}, got {_shown(value)}") from None
    if isinstance(number, float) and not (math.isfinite(number) and number.is_integer()):
        raise InputError(f"{option.name} must be {option.describe()}, got {_shown(value)}")
    number = int(number)
    if not option.low <= number <= option.high:
        raise InputError(f"{option.name} must be {option.describe()}, got {_shown(value)}")
    return number


def _read_choice(option: Option, value: Any) -> str:
    text = str(value).strip()
    if text not in option.choices:
        raise InputError(f"{option.name} must be {option.describe()}, got {_shown(value)}")
    return text


def _read_text(option: Option, value: Any) -> str:
    if not isinstance(value, str):
        raise InputError(f"{option.name} must be text, got {type(value).__name__}")
    return value


def _read_path(option: Option, value: Any) -> str:
    text = str(value).strip()
    if len(text) > 4096 or "\x00" in text:
        raise InputError(f"{option.name} is not a usable path")
    return text


def _read_image(option: Option, value: Any) -> Any:
    # Decoded and checked by models.image_input (paths, bytes and arrays are all allowed).
    if isinstance(value, str):
        return _read_path(option, value)
    return value


def _read_vector(option: Option, value: Any) -> Any:
    if isinstance(value, str):
        if len(value) > 10_000:
            raise InputError(f"{option.name} is too long ({len(value):,} characters); give a few numbers")
        return value
    try:
        return np.asarray(value, np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{option.name} must be numbers") from None


def _read_pair(option: Option, value: Any) -> tuple[int, int]:
    if isinstance(value, str):
        text = value.strip().lower().replace(";", ",")
        if text.startswith("r") and "c" in text:  # a cell name such as r3c5
            text = text[1:].replace("c", ",")
        parts: list[Any] = [p for p in text.split(",") if p.strip()]
    else:
        try:
            parts = list(value)
        except TypeError:
            parts = [value]
    try:
        a, b = (int(p) for p in parts)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{option.name} must be two whole numbers like 3,42, got {_shown(value)}") from None
    return a, b


def _read_labels(option: Option, value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else list(value)
    if len(items) > MAX_LABELS:
        raise InputError(f"{option.name}: at most {MAX_LABELS} labels, got {len(items)}")
    return tuple(str(x).strip()[:MAX_LABEL_CHARS] for x in items)


_READERS = {
    "float": _read_float, "int": _read_int, "choice": _read_choice, "text": _read_text,
    "path": _read_path, "image": _read_image, "vector": _read_vector, "pair": _read_pair, "labels": _read_labels,
}


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "…"


def cut_text(text: str, limit: int = MAX_TEXT_CHARS) -> tuple[str, str | None]:
    """Returns (text cut to `limit` characters, a one-line notice or None)."""
    if len(text) <= limit:
        return text, None
    return text[:limit], Notice(N_("the text was cut to its first {kept:,} of {total:,} characters"), kept=limit,
                                total=len(text))


def read_all(declared: Sequence[Option], raw: dict[str, Any], *, owner: str) -> dict[str, Any]:
    """Returns {name: typed value} for every declared option; InputError for unknown names.

    raw: the values given (None for "not given"). owner names the mechanism in messages.
    """
    names = {o.name for o in declared}
    unknown = sorted(k for k, v in raw.items() if k not in names and v is not None)
    if unknown:
        takes = ", ".join(o.flag for o in declared) or "no options"
        raise InputError(f"{owner} does not take {', '.join('--' + k.replace('_', '-') for k in unknown)}; it takes {takes}")
    return {o.name: o.read(raw.get(o.name)) for o in declared}


# ------------------------------------------------------------------ the shared declarations

TEXT = Option("text", "text", help=N_("input text"), required=True)
TEXT_PAIR = Option("text_pair", "text", help=N_("second sentence, for sentence pairs"))
IMAGE = Option("image", "image", help=N_("input image (a path)"), required=True)
MODEL_DIR = Option("model_dir", "path", help=N_("a local Hugging Face-format model folder: a BERT-family encoder (MiniLM pages) or a GPT-2, Llama, Mistral or Qwen folder (language model)"))
TEMPERATURE = Option(
    "temperature", "float", default=1.0, low=0.05, high=10.0, step=0.05, label=N_("Temperature τ"),
    help=N_("softmax temperature τ: scores are divided by τ (small = sharp, large = flat)"),
)
SAMPLES = Option(
    "samples", "int", default=100, low=1, high=2_000, step=1, label=N_("Samples N"),
    help=N_("hard attention: how many locations are drawn from α"),
)
SEED = Option("seed", "int", default=0, low=0, high=2**31 - 1, step=1, label=N_("Seed"), help=N_("random seed"))
MODE = Option(
    "mode", "choice", default="soft", choices=(N_("soft"), N_("argmax"), N_("sample")), label=N_("Normalisation"),
    help=N_("soft (the expectation), hard argmax, or hard sample"),
)
WINDOW = Option(
    "window", "int", default=3, low=1, high=10, step=1, label=N_("Window half-width D"),
    help=N_("local attention half-width D"),
)


# The option sets of the registry's entries (models/registry.py), one per family or input kind.

QKV_OPTIONS = (
    Option("query", "vector", help=N_("the query, e.g. '1.5,0.5' (default: the page's example)")),
    Option("keys", "vector", help=N_("keys, one row per key, e.g. '2,0.1; 0.1,2'")),
    Option("values", "vector", help=N_("values, one row per key")),
    Option("labels", "labels", help=N_("key labels, comma-separated")),
    TEMPERATURE, MODE, SEED, SAMPLES,
)
FEEDFORWARD_OPTIONS = (
    SEED.with_(label=N_("Seed (values and random marks)"), help=N_("seed of the addition sequence")),
    Option("length", "int", default=1_000, low=2, high=10_000, step=1, label=N_("Sequence length T"),
           help=N_("sequence length T")),
    Option("marked", "pair", help=N_("the two marked steps, e.g. '3,42' (default: the paper's random placement)")),
)
SEQ2SEQ_OPTIONS = (
    TEXT.with_(help=N_("the text to normalise, e.g. 'Wednesday, May 9, 2018'")),
    WINDOW.with_(help=N_("local variants: window half-width D at inference (trained with 3)")),
    Option("step", "int", low=0, high=1_000_000, help=N_("a training-step snapshot instead of the final weights")),
)
CAPTION_TEMPERATURE = TEMPERATURE.with_(low=0.1, high=5.0, step=0.1, label=N_("Temperature τ (hard)"),
                                        help=N_("α = softmax(e/τ): low τ sharpens where the captioner looks"))
IMAGE_FILE = IMAGE.with_(help=N_("input image: PNG or JPEG, checked by content"))
ENCDEC_OPTIONS = (
    TEXT.with_(max_chars=1_000, help=N_("the text to normalise, e.g. '9 May 2018'")),
    Option("step", "int", low=0, high=1_000_000, help=N_("a training-step snapshot instead of the final weights")),
)
