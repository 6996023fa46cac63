"""aiogram imported through `adapters.telegram`: its types' validators are built on first use,
and every model is then what aiogram's own import makes of it.

Each side runs in a fresh interpreter: this test process may have imported aiogram already.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # two fresh interpreters, each building every aiogram model
ROOT = Path(__file__).resolve().parents[2]

# Built on use, every model must resolve every name it refers to; then the JSON schemas of
# what Parley reads (an update, with the over 200 types it can hold) and sends compare.
DESCRIBE = """
import json, sys, warnings
from pydantic import BaseModel
if sys.argv[1] == "deferred":
    import adapters.telegram
else:
    import aiogram.types
from adapters.telegram.sdk import _models
import aiogram.methods as M
import aiogram.types as T

warnings.simplefilter("ignore")  # aiogram's Default(...) values have no JSON form
unbuilt = sorted(m.__qualname__ for m in _models(BaseModel) if not m.__pydantic_complete__)
failed = []
for model in _models(BaseModel):
    if not model.__pydantic_generic_metadata__["parameters"]:
        try:
            model.model_rebuild()
        except Exception as exc:
            failed.append(f"{model.__qualname__}: {exc}")
compared = [T.Update, T.Message, T.CallbackQuery, M.SendMessage, M.EditMessageReplyMarkup,
            M.SendMessageDraft, M.SendChatAction, M.DeleteMessage, M.AnswerCallbackQuery,
            M.GetUpdates, M.SetMyCommands, M.DeleteWebhook]
schemas = {model.__name__: model.model_json_schema() for model in compared}
print(json.dumps({"unbuilt": unbuilt, "failed": failed, "schemas": schemas}, default=str))
"""


def describe(*hows: str) -> list[dict[str, object]]:
    """What each fresh interpreter says, the two run side by side."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", DESCRIBE, how],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for how in hows
    ]
    described: list[dict[str, object]] = []
    try:
        for proc in procs:
            # an import of aiogram and every validator built: slow on a busy machine
            out, err = proc.communicate(timeout=240)
            assert proc.returncode == 0, err
            described.append(json.loads(out))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return described


def test_aiogram_types_are_built_on_use_and_the_same_as_aiogram_builds_them() -> None:
    deferred, eager = describe("deferred", "eager")

    unbuilt = deferred["unbuilt"]
    assert isinstance(unbuilt, list)
    assert {"Message", "Update", "Chat", "User", "MessageEntity"} <= set(unbuilt)
    assert deferred["failed"] == []
    assert eager["failed"] == []
    assert deferred["schemas"] == eager["schemas"]


# Five answers read, the collector run after each, counting the models pydantic makes for them.
ANSWERS = """
import gc, json
import adapters.telegram
import pydantic._internal._generics as generics
from aiogram.methods import SendMessage
from aiogram.methods.base import Response

made = []
make = generics.create_generic_submodel
generics.create_generic_submodel = lambda *args, **kw: made.append(args[0]) or make(*args, **kw)
chat = {"id": 1, "type": "private"}
answer = {"ok": True, "result": {"message_id": 7, "date": 0, "chat": chat, "text": "hi"}}
read = []
for _ in range(5):
    read.append(Response[SendMessage.__returning__].model_validate(answer).result.message_id)
    gc.collect()
print(json.dumps({"made": made, "read": read}))
"""


def test_the_model_of_a_bot_api_answer_is_made_once() -> None:
    """aiogram reads each answer with `Response[...]`, which pydantic keeps only by weak
    reference: without `adapters.telegram.sdk` keeping it, the collector's next pass took it,
    and each call made it and its validator again (a millisecond of each call)."""
    proc = subprocess.run(
        [sys.executable, "-c", ANSWERS], cwd=ROOT, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    said = json.loads(proc.stdout)
    assert said == {"made": ["Response[Message]"], "read": [7] * 5}
