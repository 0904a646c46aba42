"""Prints the figures of the 2019 tests over held-out inputs as JSON: ``python -m models.counterfactual [count]``."""

from __future__ import annotations

import json
import sys

from models.counterfactual import han, seq2seq


def main(argv: list[str]) -> None:
    count = int(argv[0]) if argv else 50
    print(json.dumps({"bahdanau": seq2seq.summary(count), "han": han.summary(count)}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
