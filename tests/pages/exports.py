"""Checks that every Export menu of a page hands out the record its own figure was drawn from.

`recording_exports(monkeypatch)` wraps ui.widgets.export_buttons so that an AppTest run of a
page collects (key, record, figure) for each menu it shows. `assert_export_is_the_figure`
then compares the numbers of the record's CSV and JSON exports with the numbers the figure
draws: every heatmap's z, every bar chart's lengths, every scatter's points.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np

import ui.widgets
from viz.export import record_bytes


def recording_exports(monkeypatch) -> list[tuple[str, object, object]]:
    """Returns the list every export_buttons call of the pages run after this appends to."""
    calls: list[tuple[str, object, object]] = []
    original = ui.widgets.export_buttons

    def recorder(record, fig, *, key, name=None, **options):
        calls.append((key, record, fig() if callable(fig) else fig))  # a panel may hand its builder
        return original(record, fig, key=key, name=name, **options)

    monkeypatch.setattr(ui.widgets, "export_buttons", recorder)
    return calls


def csv_numbers(record) -> np.ndarray:
    """Returns the weights as the CSV export writes them (matrix form, or the long form's weight column)."""
    rows = list(csv.reader(io.StringIO(record_bytes(record, "csv").decode("utf-8"))))
    if rows[0][0].endswith(" index"):  # one row per word (the HAN's): padding, left out, is 0
        weights = np.zeros(record.weights.shape, np.float64)
        for row in rows[1:]:
            weights[int(row[0]), int(row[2])] = float(row[4])
        return weights
    if rows[0][-1] == "weight":  # long form: leading indices, query, key, weight
        return np.asarray([float(r[-1]) for r in rows[1:]], np.float64).reshape(record.weights.shape)
    return np.asarray([[float(x) for x in r[1:]] for r in rows[1:]], np.float64)


def json_arrays(record) -> dict[str, np.ndarray]:
    """Returns every numeric array of the JSON export: weights and the numeric extras."""
    data = json.loads(record_bytes(record, "json"))
    out = {"weights": np.asarray(data["weights"], np.float64)}
    for name in record.extras:
        value = np.asarray(data[name]) if name in data else None
        if value is not None and value.dtype.kind in "fiu" and value.size:
            out[name] = value.astype(np.float64)
    return out


def _candidates(record) -> list[np.ndarray]:
    """Returns every array a figure of this record may draw: each [query, key] matrix (all leading
    indices), the whole weights, the JSON extras and their leading slices."""
    arrays = json_arrays(record)
    found = [arrays["weights"], csv_numbers(record)]
    lead = record.leading_axes
    for index in np.ndindex(*record.weights.shape[: len(lead)]):
        found.append(np.asarray(record.matrix(**dict(zip(lead, index))), np.float64))
    for value in arrays.values():
        found.append(value)
        if value.ndim == 4:  # [layer, head, q, k] tiled as one heatmap (the model view): layers down, heads across
            layers, heads, q, k = value.shape
            found.append(value.transpose(0, 2, 1, 3).reshape(layers * q, heads * k))
        if value.ndim >= 2:
            found.extend(value[i] for i in range(value.shape[0]))
            found.append(value.reshape(-1, value.shape[-1]))
    return found


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    # [start, end) of every run of True in a 1-D mask.
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return list(zip(edges[::2], edges[1::2]))


def panels_of(drawn: np.ndarray) -> np.ndarray | None:
    """Returns the maps of a heatmap of panels ([n, g, g'], row-major: the images page's caption
    panels, one map per word, with empty (NaN) cells between them), or None if it is not one."""
    drawn = np.asarray(drawn, np.float64)
    if drawn.ndim != 2:
        return None
    finite = np.isfinite(drawn)
    blocks = [drawn[a:b, c:d] for a, b in _runs(finite.any(axis=1)) for c, d in _runs(finite.any(axis=0))]
    blocks = [b for b in blocks if np.isfinite(b).any()]
    if len(blocks) < 2 or len({b.shape for b in blocks}) != 1:
        return None
    return np.stack(blocks)


def _matches(drawn: np.ndarray, candidates: list[np.ndarray]) -> bool:
    drawn = np.asarray(drawn, np.float64)
    if drawn.ndim == 2:  # a tiled heatmap's empty lines between its maps are layout, not data
        full = np.isnan(drawn)
        compact = drawn[~full.all(axis=1)][:, ~full.all(axis=0)]
        if compact.shape != drawn.shape and compact.size and _matches(compact, candidates):
            return True
        panels = panels_of(drawn) if full.any() else None
        if panels is not None and _matches(panels, candidates):
            return True
    for c in candidates:
        if c.size != drawn.size:
            continue
        c = c.reshape(drawn.shape)
        # Cells drawn blank (NaN) are padding, exported as 0, or undefined (a difference over a
        # token one text lacks), exported as NaN / null.
        shown = np.isfinite(drawn)
        blank = c[~shown]
        if np.allclose(drawn[shown], c[shown], rtol=1e-6, atol=1e-7) and np.all((blank == 0) | np.isnan(blank)):
            return True
    return False


def _within(drawn: np.ndarray, record) -> bool:
    # A drawn sub-block (the pair view's A→B block): every value is one of the matrix's values.
    values = np.concatenate([a.ravel() for a in json_arrays(record).values()])
    drawn = np.asarray(drawn, np.float64).ravel()
    return bool(np.all(np.min(np.abs(drawn[:, None] - values[None, :]), axis=1) <= 1e-6 + 1e-6 * np.abs(drawn)))


def drawn_arrays(fig) -> list[tuple[str, np.ndarray]]:
    """Returns (what, numbers) for every numeric quantity a figure's traces draw: heatmap cells,
    bar lengths, the α line over time, and the playground's value points and their sum, and its keys."""
    out = []
    for i, trace in enumerate(fig.data):
        name = trace.name or ""
        if trace.type == "heatmap" and trace.z is not None:
            out.append((f"trace {i} z", np.asarray(trace.z, np.float64)))
        elif trace.type == "bar":
            lengths = trace.x if trace.orientation == "h" else trace.y
            out.append((f"trace {i} bars", np.asarray(lengths, np.float64)))
        elif trace.type in ("scatter", "scattergl") and name == "α_t":
            out.append((f"trace {i} line", np.asarray(trace.y, np.float64)))
        elif trace.type == "scatter" and name == "edge weights":  # the flow route's edges (viz/flow.py)
            out.append((f"trace {i} edge weights", np.asarray(trace.customdata, np.float64)))
        elif trace.type == "scatter" and (name in ("values", "keys k_j") or name.startswith("c = ")):
            out.append((f"trace {i} points", np.column_stack([trace.x, trace.y]).astype(np.float64)))
    return out


def assert_export_is_the_figure(key: str, record, fig, *, allow_blocks: bool = False) -> int:
    """Asserts that every drawn quantity of `fig` is in `record`'s CSV/JSON; returns how many were checked."""
    candidates = _candidates(record)
    drawn = drawn_arrays(fig)
    assert drawn, f"{key}: the figure draws no numbers"
    for what, numbers in drawn:
        if numbers.ndim == 2 and numbers.shape[1] == 2 and "points" in what:
            # vectors_2d: a record of rows (dim 1, dim 2, α); the points are its first two columns.
            ok = any(c.ndim == 2 and c.shape[0] >= len(numbers) and c.shape[1] >= 2 and
                     any(np.allclose(numbers, c[s : s + len(numbers), :2], rtol=1e-6) for s in range(c.shape[0] - len(numbers) + 1))
                     for c in candidates)
        else:
            ok = _matches(numbers, candidates) or (allow_blocks and _within(numbers, record))
        assert ok, f"{key}: {what} of the figure is not in its export (record {record.axes}, {record.weights.shape})"
    return len(drawn)
