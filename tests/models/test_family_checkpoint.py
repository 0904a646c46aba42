"""A family's checkpoint declaration (models/family_checkpoint.py): paths, the trainer's output flags and the
step lookup, on the committed induction checkpoint; variant paths on the seq2seq declaration."""

import argparse

import pytest

from models.checkpoint import CHECKPOINT_ROOT
from models.induction.checkpoint import CHECKPOINT as FILES
from models.record import InputError
from models.seq2seq.checkpoint import CHECKPOINT as SEQ2SEQ
from models.training import RUNS_ROOT


def test_the_committed_file_lies_under_the_family_folder():
    assert FILES.folder == CHECKPOINT_ROOT / "induction" and FILES.file == FILES.folder / "model.safetensors"


def test_a_variant_has_its_own_file_under_the_family_folder_or_another_root(tmp_path):
    assert SEQ2SEQ.path("bahdanau") == CHECKPOINT_ROOT / "seq2seq" / "bahdanau.safetensors"
    assert SEQ2SEQ.path("local-p", tmp_path) == tmp_path / "local-p.safetensors"


def test_a_run_writes_under_runs_unless_told_to_replace_the_committed_file():
    parser = argparse.ArgumentParser()
    FILES.add_output_arguments(parser)
    assert FILES.output_folder(parser.parse_args([])) == RUNS_ROOT / "induction"
    assert FILES.output_folder(parser.parse_args(["--overwrite-committed"])) == FILES.folder
    with pytest.raises(SystemExit, match="committed checkpoint; pass --overwrite-committed"):
        FILES.output_folder(parser.parse_args(["--out", str(FILES.folder)]))


def test_the_weights_of_a_step_are_its_snapshot_and_a_step_without_one_is_refused():
    steps = FILES.committed_steps()
    graphdef, final = FILES.committed_weights()
    assert FILES.committed_weights(steps[-1]) == (graphdef, final)  # the last step is the final weights
    assert FILES.committed_weights(steps[0])[1] is FILES.committed_snapshots()[steps[0]]
    with pytest.raises(InputError, match=r"^no snapshot at step 7; available: 0, "):
        FILES.committed_weights(7)
