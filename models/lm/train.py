"""Training of the small GPT: ``python -m models.train lm`` (the family doc, docs/models/lm.md, has the recipe).

The text is the Python documentation from Debian's python3-doc (models/lm/task.py: cleaned pages,
a held-out tenth chosen by the hash of each page's path). A byte-level BPE (models/lm/tokenizer.py)
is trained on the training pages, which are then joined into one token stream with <|endoftext|>
between pages. Each step draws `--batch` windows at random places, each led by <|endoftext|> as
BOS, and takes one AdamW step on the next-token cross-entropy of H5a's DecoderLM (models/lm/model.py,
GPT-2's architecture). The learning rate warms up linearly for 100 steps, then decays (cosine) to a
tenth. About twenty times during training (and at the end) the model is measured
(models/lm/quality.py): the held-out loss on fixed windows, and every head's prefix-matching score
on [BOS] + r + r of random tokens, previous-token score and first-token share on those windows;
the log goes beside the checkpoint as training_log.json, so the page shows the heads forming.

The model is saved with models/lm/loader.py's save_gpt2_folder in Hugging Face's GPT-2 folder
format (config.json, model.safetensors, tokenizer.json), so the app reads it as it reads a user's.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from models.lm import quality, task
from models.lm.tokenizer import EOT_ID, VOCAB_SIZE, encode_plain, tokenizer_config, train_tokenizer
from models.training import NO_PROGRESS, StopRequest, TqdmProgress, make_train_step, output_folder

WARMUP = 100
LOG_POINTS = 20
LOG_WINDOWS = 16  # held-out windows measured at every log point
NAMES = ("config.json", "model.safetensors", "tokenizer.json", quality.LOG_FILE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", type=int, default=1500, help="training steps (default 1500)")
    parser.add_argument("--batch", type=int, default=16, help="windows per step (default 16)")
    parser.add_argument("--lr", type=float, default=3e-3, help="peak AdamW learning rate (default 3e-3)")
    parser.add_argument("--seed", type=int, default=0, help="initialisation seed (the window draws follow it)")
    parser.add_argument("--layers", type=int, default=2, help="decoder layers (default 2)")
    parser.add_argument("--heads", type=int, default=4, help="attention heads per layer (default 4)")
    parser.add_argument("--width", type=int, default=128, help="hidden size n_embd (default 128)")
    parser.add_argument("--context", type=int, default=128, help="positions n_positions = window length (default 128)")
    parser.add_argument("--vocab", type=int, default=VOCAB_SIZE, help=f"BPE vocabulary size (default {VOCAB_SIZE})")
    parser.add_argument("--repeat-share", type=float, default=0.25,
                        help="share of each batch's windows that hold one passage written twice (default 0.25)")
    parser.add_argument("--repeat-span", type=int, nargs=2, default=None, metavar=("LO", "HI"),
                        help="repeated windows copy one passage of LO..HI tokens to a random later place in the window "
                             "(task.repeat_spans); default: the window's first half written twice")
    parser.add_argument("--init-from", type=Path, default=None,
                        help="continue from this folder's weights, tokenizer and training log (a fresh optimiser and schedule)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop after this many minutes of training, keeping what was learnt (default: no limit)")
    parser.add_argument("--source", type=Path, default=None,
                        help=f"the _sources/ folder of the Python documentation (default: Debian's {task.PACKAGE})")
    parser.add_argument("--sample-out", type=Path, default=None,
                        help="also write the held-out sample with its bigram counts (tests/fixtures/lm_heldout_sample.json)")
    parser.add_argument("--out", type=Path, default=None,
                        help="model folder (default runs/lm; never the committed checkpoint unless --overwrite-committed)")
    parser.add_argument("--overwrite-committed", action="store_true", help="write into checkpoints/lm, replacing the committed model")


def learning_rate(peak: float, steps: int) -> optax.Schedule:
    """Returns the schedule: linear warm-up over WARMUP steps, then cosine decay to peak/10."""
    return optax.join_schedules([optax.linear_schedule(0.0, peak, WARMUP),
                                 optax.cosine_decay_schedule(peak, max(1, steps - WARMUP), alpha=0.1)], [WARMUP])


def prepare_data(vocab: int, source: Path | None, init_from: Path | None = None):
    """Returns (tokenizer, train stream, held-out stream, {"train"/"heldout": pages}); the tokenizer is
    trained on the training pages, or read from `init_from` when training continues from a folder."""
    from models.lm.loader import load_tokenizer

    pages = task.split_documents(task.load_documents(source))
    if not pages["train"] or not pages["heldout"]:
        raise SystemExit(f"lm: {len(pages['train'])} training and {len(pages['heldout'])} held-out pages; both are needed")
    tokenizer = train_tokenizer([p.text for p in pages["train"]], vocab) if init_from is None else load_tokenizer(init_from)
    streams = [task.token_stream(encode_plain(tokenizer, [p.text for p in pages[s]]), EOT_ID) for s in ("train", "heldout")]
    return tokenizer, streams[0], streams[1], pages


def make_step(graphdef, optimizer):
    """Returns the jitted step (params, opt_state, windows [B, T + 1]) -> (params, opt_state, loss, None)."""
    from models.lm.model import decoder_forward

    def loss_fn(params, windows):
        inputs = windows[:, :-1]
        logits, _ = decoder_forward(nnx.merge(graphdef, params), inputs, jnp.ones(inputs.shape, bool), attention=False)
        return optax.softmax_cross_entropy_with_integer_labels(logits, windows[:, 1:]).mean()

    return make_train_step(loss_fn, optimizer)


def _decay_mask(params):
    # Weight decay on matrices only (kernels and embeddings), not on norms and biases.
    return jax.tree.map(lambda p: p.ndim >= 2, params)


def measure(graphdef, params, windows: np.ndarray, probe: np.ndarray, half: int) -> dict:
    """Returns one log entry's measurements: held-out loss on the windows and every head's scores."""
    nll = [quality.next_token_nll(logits, rows).mean() for rows, logits, _ in
           quality.model_outputs(graphdef, params, windows, attention=False)]
    scores = quality.head_scores(graphdef, params, windows, probe, half)
    return {"heldout_loss": round(float(np.mean(nll)), 4), **scores.as_json()}


def train(args: argparse.Namespace, data, stop: StopRequest | None = None, progress=None):
    """Returns (cfg, graphdef, final params, log): `args.steps` steps (fewer if stopped or out of --minutes)."""
    from models.lm.config import gpt2_config
    from models.lm.model import DecoderLM

    stop, progress = stop or StopRequest(), progress or NO_PROGRESS
    tokenizer, train_stream, heldout_stream, _ = data
    cfg = gpt2_config(vocab_size=tokenizer.get_vocab_size(), n_embd=args.width, n_layer=args.layers,
                      n_head=args.heads, n_positions=args.context, bos_token_id=EOT_ID, eos_token_id=EOT_ID)
    module = DecoderLM(cfg, rngs=nnx.Rngs(args.seed))
    earlier = None
    if args.init_from is not None:
        from models.lm.loader import load_folder

        loaded = load_folder(args.init_from)
        if loaded.config != cfg:
            raise SystemExit(f"lm: {args.init_from} holds another shape of model than --width/--layers/--heads/--context ask for")
        nnx.update(module, loaded.state)
        earlier = quality.load_log(args.init_from)
    graphdef, params = nnx.split(module)
    optimizer = optax.chain(optax.clip_by_global_norm(1.0),
                            optax.adamw(learning_rate(args.lr, args.steps), b2=0.98, weight_decay=0.1, mask=_decay_mask))
    opt_state = optimizer.init(params)
    step_fn = make_step(graphdef, optimizer)
    rng = np.random.default_rng(args.seed)
    windows = task.eval_windows(heldout_stream, args.context, EOT_ID, limit=LOG_WINDOWS)
    half = quality.probe_half(cfg.max_positions)
    probe = quality.repeated_probe(cfg.vocab_size, EOT_ID, half=half)
    every = max(1, args.steps // LOG_POINTS)
    repeated = int(round(args.repeat_share * args.batch))
    if earlier is None:
        log: dict[str, list] = {"step": [0], "seconds": [0.0], "loss": [None]}
        for key, value in measure(graphdef, params, windows, probe, half).items():
            log[key] = [value]
    else:  # the earlier run's log goes on: its last entry measured these weights
        log = {key: list(values) for key, values in earlier["log"].items()}
    step0, seconds0 = log["step"][-1], log["seconds"][-1]
    deadline = None if args.minutes is None else time.perf_counter() + 60 * args.minutes
    start, losses, done = time.perf_counter(), [], 0
    for step in range(1, args.steps + 1):
        if stop.requested or (deadline is not None and time.perf_counter() > deadline):
            print(f"lm: stopping early at step {done}")
            break
        batch = task.sample_windows(rng, train_stream, args.batch, args.context + 1, EOT_ID, repeated,
                                    None if args.repeat_span is None else tuple(args.repeat_span))
        params, opt_state, loss, _ = step_fn(params, opt_state, batch)
        losses.append(loss)
        done = step
        if step % every == 0 or step == args.steps:
            entry = {"step": step0 + step, "seconds": round(seconds0 + time.perf_counter() - start, 1),
                     "loss": round(float(np.mean(jax.device_get(losses))), 4), **measure(graphdef, params, windows, probe, half)}
            for key, value in entry.items():
                log[key].append(value)
            losses = []
            progress.update(step, args.steps, loss=entry["loss"], heldout=entry["heldout_loss"],
                            matching=float(np.max(entry["prefix_matching"])))
    progress.close()
    if log["step"][-1] != step0 + done:  # stopped between two log points
        entry = {"step": step0 + done, "seconds": round(seconds0 + time.perf_counter() - start, 1),
                 "loss": round(float(np.mean(jax.device_get(losses))), 4) if losses else None,
                 **measure(graphdef, params, windows, probe, half)}
        for key, value in entry.items():
            log[key].append(value)
    return cfg, graphdef, params, log


def run(args: argparse.Namespace) -> int:
    """Returns 0 after training and writing the model folder (runs/lm/ unless --overwrite-committed)."""
    from models.lm.loader import save_gpt2_folder

    folder = output_folder(args.out, quality.CHECKPOINT_DIR, NAMES, overwrite_committed=args.overwrite_committed)
    began = time.perf_counter()
    data = prepare_data(args.vocab, args.source, args.init_from)
    earlier = None if args.init_from is None else quality.load_log(args.init_from)
    tokenizer, train_stream, heldout_stream, pages = data
    print(f"lm: {len(pages['train'])} training pages ({len(train_stream):,} tokens), {len(pages['heldout'])} held out "
          f"({len(heldout_stream):,} tokens), {time.perf_counter() - began:.0f} s to prepare")
    stop = StopRequest()
    with stop.on_signals():
        cfg, graphdef, params, log = train(args, data, stop, TqdmProgress("lm", args.steps, every=1))
    save_gpt2_folder(folder, cfg, params, tokenizer, tokenizer_config(cfg.max_positions))
    counts = quality.bigram_counts(train_stream, cfg.vocab_size)
    heldout = task.eval_windows(heldout_stream, cfg.max_positions, EOT_ID)
    bigram, k = quality.best_bigram(counts, heldout)
    model = quality.perplexity(graphdef, params, heldout)
    command = "python -m models.train lm " + " ".join(_flags(args))
    if earlier is not None:  # the whole recipe: the run continued from, then this one
        command = f"{earlier['command']} && {command}"
    info = {"command": command, "steps": log["step"][-1],
            "batch": args.batch, "repeat_share": args.repeat_share, "repeat": repeat_note(args), "lr": args.lr, "seed": args.seed, "train_seconds": log["seconds"][-1],
            "data": {"package": task.PACKAGE, "licence": task.LICENCE, "train_pages": len(pages["train"]),
                     "heldout_pages": len(pages["heldout"]), "train_tokens": int(len(train_stream)),
                     "heldout_tokens": int(len(heldout_stream))},
            "heldout": {"perplexity": round(model, 3), "bigram_perplexity": round(bigram, 3), "bigram_k": k,
                        "tokens": int(heldout.shape[0] * (heldout.shape[1] - 1))},
            "log_every": max(1, args.steps // LOG_POINTS), "log_windows": LOG_WINDOWS,
            "probe": {"half": quality.probe_half(cfg.max_positions), "count": quality.COUNT, "seed": quality.PROBE_SEED}, "log": log}
    if earlier is not None:  # the run this one continued, as its own log described it (its log is in ours)
        info["earlier"] = {k: v for k, v in earlier.items() if k not in ("log", "heldout", "data", "probe")}
    (folder / quality.LOG_FILE).write_text(json.dumps(info, separators=(",", ":")) + "\n", encoding="utf-8")
    if args.sample_out is not None:
        sample = quality.sample_from(tokenizer, pages["heldout"], counts, k, chars=20_000)
        args.sample_out.write_text(json.dumps(sample, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    best = np.max(log["prefix_matching"][-1])
    print(f"lm: {info['train_seconds']:.0f} s, {info['steps']} steps; held-out perplexity {model:.2f} vs bigram "
          f"{bigram:.2f} (k {k}); best prefix-matching {best:.3f}, first reached {quality.GOAL} at step "
          f"{quality.emergence_step(log)} -> {folder}")
    return 0


def repeat_note(args: argparse.Namespace) -> dict:
    """Returns the log's account of the repeated windows: share, span (None: first half twice) and what they hold."""
    return {"share": args.repeat_share, "span": None if args.repeat_span is None else list(args.repeat_span),
            "text": "real text: each repeated window copies one passage of its own documentation text to a later "
                    "place in it (models/lm/task.py sample_windows); no synthetic tokens"}


def _flags(args: argparse.Namespace) -> list[str]:
    return [f"--{k.replace('_', '-')} " + (" ".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v))
            for k, v in vars(args).items()
            if k not in ("task", "out", "overwrite_committed", "sample_out", "source") and v is not None]
