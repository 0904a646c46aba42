"""The one base class of the errors Attention Lab raises on purpose.

Every such error carries a one-line message for the user and the exit status the CLI ends
with. The CLI prints the line on stderr and exits with `exit_status`; a page shows the line
where the model or export it belongs to would have been, and the rest of the page goes on.

    2  bad input: a flag, an option value, a text, a file or a model folder the user gave
    1  a failure that is not the input's fault: a damaged or missing checkpoint, an image
       export whose browser cannot start or does not answer
"""

from __future__ import annotations


class LabError(Exception):
    """An error raised on purpose; str(error) is one line saying what went wrong and what to do."""

    exit_status = 1

    def one_line(self) -> str:
        """Returns the message's first line (the class name when there is no message)."""
        text = str(self).strip()
        return text.splitlines()[0] if text else type(self).__name__
