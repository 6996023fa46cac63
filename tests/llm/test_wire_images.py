"""Images on the wire: each API's own image shape, bytes read from the file store, the same
body whichever way it is built, and a sentence in place of an image whose file is gone."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from bot.files.store import FileStore
from bot.llm import anthropic as anthropic_wire
from bot.llm import openai as openai_wire
from bot.llm.base import ModelRequest, SystemPart
from bot.llm.media import GONE, carries_images
from bot.vocabulary.messages import ImageBlock, Message, TextBlock

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def asking(store: FileStore) -> ModelRequest:
    ref = store.put(PNG, "image/png", "shot.png")
    question = [TextBlock(text="[Sun 10:00]"), ImageBlock(file=ref), TextBlock(text="What's this?")]
    return ModelRequest(
        model="m",
        system=[SystemPart("You are Parley.")],
        messages=[Message(role="user", content=question)],
    )


def test_anthropic_takes_an_image_block_with_base64_source(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    [message] = anthropic_wire.build_params(asking(store), store)["messages"]
    text, image, question = message["content"]
    assert (text["text"], question["text"]) == ("[Sun 10:00]", "What's this?")
    assert image == {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(PNG).decode(),
        },
    }


def test_openai_takes_image_url_parts_with_a_data_url(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    [_system, message] = openai_wire.build_params(asking(store), store)["messages"]
    assert message["role"] == "user"
    assert [part["type"] for part in message["content"]] == ["text", "image_url", "text"]
    url = message["content"][1]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(PNG).decode()


@pytest.mark.parametrize(
    ("wire", "extra"),
    [
        (anthropic_wire, {"stream": True}),
        (openai_wire, {"stream": True, "stream_options": {"include_usage": True}}),
    ],
)
def test_the_kept_encoding_is_the_body_the_parameters_make(
    tmp_path: Path, wire: Any, extra: dict[str, Any]
) -> None:
    store = FileStore(tmp_path)
    sent = asking(store)
    assert carries_images(sent.messages)
    assert json.loads(wire.encode_body(sent, store)) == {**wire.build_params(sent, store), **extra}


@pytest.mark.parametrize("wire", [anthropic_wire, openai_wire])
def test_an_image_whose_file_is_gone_is_a_sentence(tmp_path: Path, wire: Any) -> None:
    store = FileStore(tmp_path)
    sent = asking(store)
    [image] = sent.messages[0].images
    store.path(image.file.sha256).unlink()
    body = wire.encode_body(sent, store).decode()
    assert GONE in body
    assert base64.b64encode(PNG).decode() not in body
