"""The translation forward carries the date model trained here: with date_arch and date_params
(models/translation/date_model.py) it computes what models/encdec/forward.py computes on the committed
checkpoint (maps, head outputs, residual streams and logits of a teacher-forced pass), and its cached greedy
decoding writes what the date model's writes."""

from __future__ import annotations

import numpy as np
from flax import nnx

from models.capture import Capture
from models.encdec import forward as date_forward
from models.encdec.model import LENGTH_BUCKETS, pad_batch
from models.encdec.records import load_model
from models.seq2seq import task as dates
from models.translation.config import Generation
from models.translation.date_model import date_arch, date_params
from models.translation.forward import KindCapture, greedy, teacher_forced

EVERYTHING = KindCapture(
    encoder=Capture(logits=False, maps=True, heads=True, residual=True),
    decoder=Capture(maps=True, heads=True, residual=True),
    cross=Capture(logits=False, maps=True, heads=True),
)


def test_the_translation_forward_computes_the_date_models_forward():
    cfg, graphdef, params, _info = load_model()
    arch, tree = date_arch(cfg), date_params(nnx.merge(graphdef, params))
    texts = ["Wednesday, 9 May 2018", "12/31/99"]
    src, lengths = pad_batch([dates.encode_source(t).ids for t in texts], LENGTH_BUCKETS[-1], 2)
    tokens, _ = date_forward.read_own_output(graphdef, params, src, lengths)
    bos = np.full((2, 1), arch.decoder_start_id, np.int32)
    fed = np.concatenate([bos, np.asarray(tokens)[:, :-1]], axis=1)
    theirs = date_forward.teacher_forced(graphdef, params, src, lengths, fed, capture=EVERYTHING)
    ours = teacher_forced(arch, tree, src, lengths, fed, capture=EVERYTHING)
    np.testing.assert_allclose(np.asarray(ours["logits"]), np.asarray(theirs["logits"]), atol=1e-4)
    for kind in ("encoder", "decoder", "cross"):
        for name, values in theirs[kind].items():
            for mine, other in zip(ours[kind][name], values, strict=True):
                np.testing.assert_allclose(np.asarray(mine), np.asarray(other), atol=1e-5, err_msg=f"{kind} {name}")
    written = greedy(arch, tree, src, lengths, rules=Generation(eos_ids=(-1,)), steps=cfg.output_length)
    assert np.asarray(written).tolist() == np.asarray(tokens).tolist()
