"""Where local model folders may lie, how large they may be, and their safetensors, read lazily.

The one reader of local folders: models/lm/loader.py (decoder LMs) and
models/transformer/checkpoint.py (BERT encoders) read every folder through these functions.

- ``model_root`` and ``resolve_model_dir`` decide which folders a browser user may open: inside
  ATTENTION_LAB_MODEL_ROOT, at most ATTENTION_LAB_MAX_MODEL_BYTES of float32 weights (default 2 GB).
  The CLI takes any folder.
- ``weight_files`` finds model.safetensors or the shards model.safetensors.index.json lists, and
  refuses a folder of pickles (loading one can run code).
- ``SharedRunners`` keeps one loaded runner per folder for the whole process (pages, registry builders, CLI).
- ``TensorFiles`` reads names, shapes and dtypes from the headers first and data only on request,
  as float32 (float16 and bfloat16 upcast).

Every problem a folder can have is one InputError line naming it.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from models.record import InputError
from models.text import N_, Notice

MODEL_ROOT_ENV = "ATTENTION_LAB_MODEL_ROOT"
MAX_BYTES_ENV = "ATTENTION_LAB_MAX_MODEL_BYTES"
DEFAULT_MAX_BYTES = 2_000_000_000
NOT_AVAILABLE = Notice(N_("that model folder is not available here; the folders you may use are the ones the operator put "
                          "under the model root"))
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
_FLOAT_DTYPES = {"F16": 2, "BF16": 2, "F32": 4, "F64": 8}

# ----------------------------------------------------------------------------- where folders may lie


def model_root() -> Path | None:
    """Returns the operator-set folder that user-chosen model folders must lie in, or None (no
    user-chosen folders: pages hide the box)."""
    value = os.environ.get(MODEL_ROOT_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else None


def max_model_bytes() -> int:
    """Returns the operator's bound on a browser-chosen model's float32 weights (default 2 GB)."""
    value = os.environ.get(MAX_BYTES_ENV, "").strip().replace("_", "")
    if not value:
        return DEFAULT_MAX_BYTES
    if not value.isdigit():
        raise InputError(f"{MAX_BYTES_ENV}={value!r} is not a whole number of bytes; ask the operator to fix it")
    return int(value)


def resolve_model_dir(text: str, root: Path | None, *, max_bytes: int | None = None) -> Path:
    """Returns the resolved folder a browser user asked for, inside `root`; InputError otherwise.

    Relative names are taken inside the root; symlinks are followed before the check, so one
    that leaves the root is refused. Every refusal of a folder that is not usable is the same
    sentence, whether the path exists or not, so the box cannot probe the server's files. A usable
    folder whose weights exceed max_bytes (default: max_model_bytes()) as float32 is refused by size.
    """
    if root is None or not text or "\x00" in text or len(text) > 1024:
        raise InputError(NOT_AVAILABLE)
    try:
        candidate = Path(text).expanduser()
        candidate = (candidate if candidate.is_absolute() else root / candidate).resolve()
        inside = candidate.is_relative_to(root) and candidate != root
        usable = inside and (candidate / "config.json").is_file()
    except (OSError, RuntimeError, ValueError):
        usable = False
    if not usable:
        raise InputError(NOT_AVAILABLE)
    bound = max_model_bytes() if max_bytes is None else max_bytes
    try:
        files = TensorFiles(candidate)
    except InputError:
        return candidate  # malformed: loading it says what is wrong, in one line
    files.check_size(bound)
    return candidate


# ----------------------------------------------------------------------------- reading a folder


def read_config_json(folder: str | Path) -> dict[str, Any]:
    """Returns the parsed config.json of a folder; InputError if the folder or the file is not usable."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(Notice(N_("model folder not found: {folder}"), folder=str(folder)))
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise InputError(Notice(N_("{folder} has no config.json: not a Hugging Face model folder"), folder=str(folder)))
    try:
        data = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(Notice(N_("{file} is not valid JSON ({error})"), file=str(config_file),
                                error=str(error).splitlines()[0])) from None
    if not isinstance(data, dict):
        raise InputError(Notice(N_("{file} is not a JSON object"), file=str(config_file)))
    return data


def weight_files(folder: str | Path) -> list[Path]:
    """Returns the safetensors files of a folder: model.safetensors, or the shards its index lists.

    A folder with only pickled PyTorch weights is refused (unpickling can run code).
    """
    folder = Path(folder)
    single, index = folder / "model.safetensors", folder / "model.safetensors.index.json"
    if single.is_file():
        return [single]
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
            names = sorted(set(weight_map.values()))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError):
            raise InputError(Notice(N_("{index} is not a safetensors index (a JSON object with a weight_map)"),
                                    index=str(index))) from None
        shards = []
        for name in names:
            shard = (folder / str(name)).resolve()
            if not shard.is_relative_to(folder.resolve()) or not shard.is_file():
                raise InputError(Notice(N_("{index} lists {name}, which is not a file in {folder}"), index=index.name,
                                        name=repr(name), folder=str(folder)))
            shards.append(shard)
        if not shards:
            raise InputError(Notice(N_("{index} lists no files"), index=str(index)))
        return shards
    pickles = sorted(p.name for p in folder.iterdir() if p.suffix in PICKLE_SUFFIXES)
    if pickles:
        raise InputError(Notice(
            N_("{folder} holds only pickled PyTorch weights ({files}); pickles are refused because loading one can "
               "run code: save the model with safetensors (save_pretrained(safe_serialization=True))"),
            folder=str(folder), files=", ".join(pickles[:3]),
        ))
    raise InputError(Notice(N_("{folder} has no model.safetensors (nor model.safetensors.index.json)"), folder=str(folder)))


class TensorFiles:
    """The tensors of a folder's safetensors files, read lazily: headers now, data on request."""

    def __init__(self, folder: str | Path):
        from safetensors import SafetensorError, safe_open

        self.folder = Path(folder)
        self.files = weight_files(self.folder)
        self.where: dict[str, Path] = {}
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.dtypes: dict[str, str] = {}
        for file in self.files:
            try:
                with safe_open(str(file), framework="numpy") as handle:
                    for name in handle.keys():
                        view = handle.get_slice(name)
                        if name in self.where:
                            raise InputError(Notice(N_("tensor {name} is stored twice ({first} and {second})"), name=name,
                                                                first=self.where[name].name, second=file.name))
                        self.where[name], self.shapes[name] = file, tuple(view.get_shape())
                        self.dtypes[name] = view.get_dtype()
            except (SafetensorError, OSError, ValueError) as error:
                if isinstance(error, InputError):
                    raise
                raise InputError(Notice(N_("{file} is not a readable safetensors file ({error})"), file=str(file),
                                        error=str(error).splitlines()[0])) from None

    def float32_bytes(self) -> int:
        """Returns how many bytes the tensors take once upcast to float32."""
        return sum(4 * int(np.prod(shape, dtype=np.int64)) for shape in self.shapes.values())

    def check_size(self, max_bytes: int | None) -> None:
        """Raises InputError if the weights as float32 exceed max_bytes (None: no bound)."""
        needed = self.float32_bytes()
        if max_bytes is not None and needed > max_bytes:
            raise InputError(Notice(
                N_("{folder}: the weights take {needed} as float32, more than the {allowed} this server allows "
                   "({variable}); choose a smaller model"), folder=self.folder.name, needed=readable_bytes(needed),
                allowed=readable_bytes(max_bytes), variable=MAX_BYTES_ENV,
            ))

    def read(self, names: list[str], *, floats_only: bool = True) -> dict[str, np.ndarray]:
        """Returns {name: array} of these tensors, floating point ones as float32.

        floats_only: a tensor that is not floating point raises InputError naming it (otherwise it
        comes back as stored, e.g. BERT's int64 position_ids buffer, for the caller to judge).
        """
        from safetensors import SafetensorError, safe_open

        wrong = [f"{n} ({self.dtypes[n]})" for n in names if self.dtypes[n] not in _FLOAT_DTYPES]
        if wrong and floats_only:
            raise InputError(Notice(N_("tensors that are not floating point: {names}"), names=", ".join(wrong[:5])))
        out = {}
        for file in self.files:
            wanted = [n for n in names if self.where[n] == file]
            if not wanted:
                continue
            try:
                with safe_open(str(file), framework="numpy") as handle:
                    for name in wanted:
                        value = handle.get_tensor(name)
                        out[name] = value.astype(np.float32) if self.dtypes[name] in _FLOAT_DTYPES else value
            except (SafetensorError, OSError, ValueError) as error:
                raise InputError(Notice(N_("{file} is not a readable safetensors file ({error})"), file=str(file),
                                        error=str(error).splitlines()[0])) from None
        return out


def readable_bytes(n: int) -> str:
    """Returns a byte count as people read it: 840 kB, 12.5 MB, 2.00 GB."""
    if n < 1e6:
        return f"{n / 1e3:.0f} kB"
    return f"{n / 1e6:.1f} MB" if n < 1e9 else f"{n / 1e9:.2f} GB"


def read_tensors(folder: str | Path, max_bytes: int | None = None) -> dict[str, np.ndarray]:
    """Returns every tensor of a folder's safetensors files, floating point ones as float32 (for the BERT loader)."""
    files = TensorFiles(folder)
    files.check_size(max_bytes)
    return files.read(list(files.shapes), floats_only=False)


def model_dir_option(options: Mapping[str, Any]) -> str | None:
    """Returns options["model_dir"] as an absolute path, or None for the family's default model."""
    value = options.get("model_dir")
    return None if value in (None, "") else str(Path(str(value)).expanduser().resolve())


class SharedRunners:
    """The process's one runner per model folder, loaded on first use, the `kept` latest kept: the pages, the
    registry builders and the CLI share it, so that a user's model is held in memory once, not once per caller.

    load(folder or None, max_bytes) makes a runner (None: the family's default model). max_bytes bounds the
    float32 weights, checked by load on the folder's headers and here on a runner already loaded (its
    `weight_bytes`) for an unbounded caller. Loads are serialised (one lock), so two sessions asking at once
    load a folder once.
    """

    def __init__(self, load: Callable[[str | None, int | None], Any], kept: int = 2):
        self._load, self.kept = load, kept
        self._runners: OrderedDict[str | None, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, model_dir: str | Path | None, *, max_bytes: int | None = None):
        key = None if model_dir in (None, "") else str(Path(model_dir).expanduser().resolve())
        with self._lock:
            runner = self._runners.get(key)
            if runner is None:
                runner = self._load(key, max_bytes)
                self._runners[key] = runner
                while len(self._runners) > self.kept:
                    self._runners.popitem(last=False)
            self._runners.move_to_end(key)
        size = getattr(runner, "weight_bytes", None)
        if max_bytes is not None and size is not None and size > max_bytes:
            raise InputError(Notice(N_("{model}: the weights take {size} as float32, more than the {limit} this "
                                       "server allows ({setting}); choose a smaller model"),
                                    model=getattr(runner, "name", key), size=readable_bytes(size),
                                    limit=readable_bytes(max_bytes), setting=MAX_BYTES_ENV))
        return runner

    def loaded(self) -> list[str | None]:
        """Returns the folders loaded now, least recently used first."""
        return list(self._runners)

    def forget(self) -> None:
        """Drops every runner (a folder's files replaced on disk, or a test that points the default elsewhere)."""
        with self._lock:
            self._runners.clear()
