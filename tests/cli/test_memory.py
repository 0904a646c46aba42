"""Batches are bounded by bytes: the chunk plan, the estimates it reads, and the CLI following it.

The bound is checked through the plan and the objects alive, never through a timing or an RSS
reading: records of a chunk are gone before the next chunk is built, and a chunk's estimated
records stay within CHUNK_BYTES. (The RSS of real 512-token batches is measured by hand with
/usr/bin/time -v; docs/PERFORMANCE.md names the command.)
"""

import weakref

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models import entry
from models.entry import CHUNK_BYTES, DEFAULT_RECORD_BYTES, MAX_CHUNK_INPUTS, Mechanism, plan_chunks
from models.registry import get_mechanism

MB = 2**20
MINILM_512 = 6 * 12 * (512 * 512 + 512 * 512) * 4  # padded maps + the record's copy, float32


def test_big_records_put_fewer_inputs_in_a_chunk():
    small = list(plan_chunks([DEFAULT_RECORD_BYTES] * 70))
    big = list(plan_chunks([MINILM_512] * 7))
    assert [len(c) for c in small] == [32, 32, 6]
    assert [len(c) for c in big] == [1] * 7  # 151 MB each: two would pass 256 MB
    assert [len(c) for c in plan_chunks([75 * MB] * 10)] == [3, 3, 3, 1]
    mixed = list(plan_chunks([1 * MB] * 5 + [300 * MB] + [1 * MB] * 3))
    assert mixed == [[0, 1, 2, 3, 4], [5], [6, 7, 8]]  # one input above the budget is a chunk alone


@given(st.lists(st.integers(1, 3 * CHUNK_BYTES), max_size=60), st.integers(1, 4 * CHUNK_BYTES), st.integers(1, 40))
def test_a_plan_keeps_the_order_and_each_chunk_within_the_budget(sizes, budget, max_inputs):
    chunks = list(plan_chunks(sizes, budget, max_inputs))
    assert [i for c in chunks for i in c] == list(range(len(sizes)))
    for chunk, following in zip(chunks, [*chunks[1:], None]):
        held = sum(sizes[i] for i in chunk)
        assert chunk and len(chunk) <= max_inputs
        assert held <= budget or len(chunk) == 1
        if following:  # closed only when the next input would not fit
            assert len(chunk) == max_inputs or held + sizes[following[0]] > budget


def test_a_plan_reads_sizes_one_ahead_of_what_it_yields():
    read = []

    def sizes():
        for i in range(10):
            read.append(i)
            yield 100 * MB

    plan = plan_chunks(sizes())
    assert next(plan) == [0, 1] and read == [0, 1, 2]


def test_the_minilm_estimate_follows_the_token_count():
    mechanism = get_mechanism("transformer")
    long_text = " ".join(["word"] * 700)  # cut at 512 tokens
    assert mechanism.estimated_bytes({"text": long_text}) == MINILM_512
    short = mechanism.estimated_bytes({"text": "The cat sat."})  # [CLS] the cat sat . [SEP]: 6 tokens, bucket 16
    assert short == 6 * 12 * (16 * 16 + 6 * 6) * 4
    record = mechanism.build({"text": "The cat sat."})
    assert record.weights.nbytes <= short
    assert mechanism.estimated_bytes({"text": ""}) == DEFAULT_RECORD_BYTES  # bad input: build() says it
    assert get_mechanism("qkv-dot").estimated_bytes({"query": "1,2"}) == DEFAULT_RECORD_BYTES


@pytest.mark.parametrize("estimate, chunks", [(DEFAULT_RECORD_BYTES, [32, 32, 6]), (100 * MB, [2] * 35),
                                             (CHUNK_BYTES + 1, [1] * 70)])
def test_the_cli_builds_chunks_by_the_estimate_and_frees_each_before_the_next(tmp_path, monkeypatch, estimate, chunks):
    import cli

    built = []  # weak references to every record built
    sizes = []
    original = Mechanism.build_many

    def build_many(self, raw_list):
        # The records of earlier chunks are gone before this chunk is built: what is held at once
        # is one chunk, at most CHUNK_BYTES of estimated records (or one record above it).
        alive = [ref for ref in built if ref() is not None]
        assert not alive, f"{len(alive)} records of an earlier chunk are still alive"
        assert len(raw_list) * estimate <= CHUNK_BYTES or len(raw_list) == 1
        sizes.append(len(raw_list))
        records = original(self, raw_list)
        built.extend(weakref.ref(r) for r in records)
        return records

    monkeypatch.setattr(Mechanism, "build_many", build_many)
    monkeypatch.setattr(Mechanism, "estimated_bytes", lambda self, raw: estimate)
    lines = tmp_path / "q.txt"
    lines.write_text("\n".join(f"{i % 3},1" for i in range(70)))
    out = tmp_path / "out"
    assert cli.main(["export", "--mechanism", "qkv-dot", "--input-file", str(lines), "--format", "csv",
                     "--out", str(out)]) == 0
    assert sizes == chunks and len(list(out.iterdir())) == 70
    assert entry.MAX_CHUNK_INPUTS == MAX_CHUNK_INPUTS == 32


def test_every_declared_estimate_covers_its_example_record():
    from models.registry import MECHANISMS, example_options

    declared = [m for m in MECHANISMS if m.record_size]
    assert declared, "no mechanism declares an estimate: the transformer's must"
    for mechanism in declared:
        options = example_options(mechanism)
        assert mechanism.estimated_bytes(options) >= mechanism.build(options).weights.nbytes, mechanism.id
