"""JSON text from an encoder built once: `JSONEncoder.encode` builds its C encoder (and a
closure) on every call, which costs as much as encoding a small document, and the recorder
encodes two or three small documents per tool call. Under `AGENTCTL_PLAIN=1`, `encode` itself."""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable

from agentctl._speedups import PLAIN


def compiled(encoder: json.JSONEncoder) -> Callable[[object], str]:
    """`encoder.encode` with the C encoder made once (same text; no check for circular
    references, which plain documents do not have). Falls back to `encode` where the C
    speed-ups are missing, and under `AGENTCTL_PLAIN=1`."""
    make = None if PLAIN else getattr(json.encoder, "c_make_encoder", None)
    if make is None or encoder.indent is not None:
        return encoder.encode
    escape = json.encoder.encode_basestring_ascii if encoder.ensure_ascii \
        else json.encoder.encode_basestring
    run = make(None, encoder.default, escape, None, encoder.key_separator,
               encoder.item_separator, encoder.sort_keys, encoder.skipkeys, encoder.allow_nan)

    def encode(value: object) -> str:
        return "".join(run(value, 0))

    return encode
