"""The app's own HAN models ("train your own") as they are kept on disk: OwnModel, and a store
under runs/app/han/ where each model lives a day (so a reload of the page finds it) and at most
OWN_KEEP are kept.
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.han.model import CHECKPOINT, HANConfig
from models.training import RUNS_ROOT


@dataclass(frozen=True)
class OwnModel:
    """A model trained in the app, as the page shows it and as it is kept on disk."""

    cfg: HANConfig
    graphdef: Any
    state: Any
    data_name: str
    rows: int
    epochs: int
    epoch: int
    steps: int
    losses: tuple[float, ...]
    note: str = ""  # why training ended early, if it did

    @property
    def finished(self) -> bool:
        return self.epoch >= self.epochs

    def info(self) -> dict[str, Any]:
        return {"trained_on": self.data_name, "rows": self.rows, "epochs": self.epochs, "epoch": self.epoch,
                "steps": self.steps, "losses": list(self.losses), "note": self.note}


OWN_DIR = RUNS_ROOT / "app" / "han"  # in-app models, kept OWN_TTL seconds so a reload finds them
OWN_TTL = 24 * 3600
OWN_KEEP = 200
_OWN_ID = re.compile(r"[A-Za-z0-9_-]{8,32}")


def own_model_path(job_id: str, folder: Path | None = None) -> Path | None:
    """Returns where an in-app model is kept (default folder OWN_DIR), or None for an id that is not one of ours."""
    return (folder or OWN_DIR) / f"{job_id}.safetensors" if _OWN_ID.fullmatch(str(job_id or "")) else None


def save_own_model(model: OwnModel, path: Path) -> Path:
    """Writes an in-app model (atomically) and drops kept models past their time."""
    CHECKPOINT.save(path, model.cfg, model.state, info=model.info())
    purge_own_models(path.parent)
    return path


def load_own_model(path: Path | None) -> OwnModel | None:
    """Returns the in-app model kept at `path`, or None if it is missing, expired or unreadable."""
    if path is None or not path.is_file() or time.time() - path.stat().st_mtime > OWN_TTL:
        return None
    try:
        cfg, graphdef, state, info = CHECKPOINT.load(path)
    except Exception:  # noqa: BLE001 - a damaged or foreign file is simply not there
        return None
    return OwnModel(cfg, graphdef, state, str(info.get("trained_on", "")), int(info.get("rows", 0)),
                    int(info.get("epochs", 0)), int(info.get("epoch", 0)), int(info.get("steps", 0)),
                    tuple(float(x) for x in info.get("losses", [])), str(info.get("note", "")))


def purge_own_models(folder: Path, *, ttl: float = OWN_TTL, keep: int = OWN_KEEP) -> None:
    """Deletes in-app models older than ttl seconds, and all but the newest `keep`."""
    if not folder.is_dir():
        return
    files = sorted(folder.glob("*.safetensors"), key=lambda p: p.stat().st_mtime, reverse=True)
    now = time.time()
    for index, path in enumerate(files):
        if index >= keep or now - path.stat().st_mtime > ttl:
            with contextlib.suppress(OSError):
                path.unlink()
