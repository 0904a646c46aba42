"""An uploaded file's bytes as text: the checks every upload shares (its size, UTF-8, no binary data), each
failure an InputError whose one line the uploading page gives (a Notice template marked N_, models/text.py)."""

from __future__ import annotations

from models.record import InputError
from models.text import Notice


def upload_text(data: bytes, *, max_bytes: int, too_big: str, not_utf8: str, binary: str, empty: str) -> str:
    """Returns the text of an upload (UTF-8, a byte-order mark dropped); InputError with the page's line when
    it is larger than max_bytes (too_big gets {size} and {limit} in MB), not UTF-8, binary or blank."""
    if len(data) > max_bytes:
        raise InputError(Notice(too_big, size=len(data) / 1e6, limit=max_bytes / 1e6))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(Notice(not_utf8)) from None
    if "\x00" in text:
        raise InputError(Notice(binary))
    if not text.strip():
        raise InputError(Notice(empty))
    return text
