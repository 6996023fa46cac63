"""Files on the wire: each API's own image and document shapes, bytes read from the file
store, the same body whichever way it is built, and a sentence in place of a file that is
gone."""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from bot.files.store import FileStore
from bot.llm import anthropic as anthropic_wire
from bot.llm import openai as openai_wire
from bot.llm.base import ModelRequest, SystemPart
from bot.llm.media import GONE, MAX_SHOWN, carries_files, encode_off_loop
from bot.vocabulary.messages import DocumentBlock, ImageBlock, Message, PerMessage, TextBlock

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
    assert carries_files(sent.messages)
    assert json.loads(wire.encode_body(sent, store)) == {**wire.build_params(sent, store), **extra}


@pytest.mark.parametrize("wire", [anthropic_wire, openai_wire])
def test_an_image_whose_file_is_gone_is_a_sentence(tmp_path: Path, wire: Any) -> None:
    store = FileStore(tmp_path)
    sent = asking(store)
    [image] = sent.messages[0].attached
    store.path(image.file.sha256).unlink()
    body = wire.encode_body(sent, store).decode()
    assert GONE in body
    assert base64.b64encode(PNG).decode() not in body


PDF = b"%PDF-1.7\n(a stand-in: the store keeps bytes, it does not read them)"


def with_documents(store: FileStore) -> ModelRequest:
    pdf = store.put(PDF, "application/pdf", "bill.pdf")
    taken_out = store.put(b"[Page 1]\nTotal: 42 EUR", "text/plain")
    pdf = pdf.model_copy(update={"extract": taken_out.sha256})
    csv = store.put(("a,b\n" + "1,2\n" * 60_000).encode(), "text/csv", "t.csv")
    question = [DocumentBlock(file=pdf), DocumentBlock(file=csv), TextBlock(text="Sum?")]
    return ModelRequest("m", [SystemPart("P.")], [Message(role="user", content=question)])


def test_anthropic_reads_a_pdf_as_a_pdf_and_a_text_file_as_plain_text(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    [message] = anthropic_wire.build_params(with_documents(store), store)["messages"]
    pdf, csv, _question = message["content"]
    assert pdf == {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf",
                   "data": base64.b64encode(PDF).decode()},
        "title": "bill.pdf",
    }  # fmt: skip
    assert (csv["source"]["type"], csv["source"]["media_type"], csv["title"]) == (
        "text", "text/plain", "t.csv",
    )  # fmt: skip
    assert len(csv["source"]["data"]) < MAX_SHOWN + 100
    assert csv["source"]["data"].endswith("more characters of this file are not shown]")


def test_openai_reads_documents_as_their_text(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    [_system, message] = openai_wire.build_params(with_documents(store), store)["messages"]
    pdf, csv, question = (part["text"] for part in message["content"])
    assert pdf == "[File “bill.pdf” (application/pdf)]\n[Page 1]\nTotal: 42 EUR"
    assert csv.startswith("[File “t.csv” (text/csv)]\na,b\n1,2")
    assert question == "Sum?"


async def test_only_messages_encoded_anew_are_looked_at_for_files(tmp_path: Path) -> None:
    """A conversation's files are read off the event loop only while a message that holds
    them is encoded anew; once kept, a later call looks at the new messages alone."""
    store = FileStore(tmp_path)
    sent = asking(store)
    kept = sent.per_message.setdefault("anthropic", PerMessage(str))
    assert list(kept.fresh(sent.messages)) == sent.messages and carries_files(sent.messages)
    kept.values(sent.messages)
    assert list(kept.fresh(sent.messages)) == []
    sent.messages.append(Message(role="assistant", content=[TextBlock(text="A screenshot.")]))
    assert list(kept.fresh(sent.messages)) == sent.messages[-1:]
    assert not carries_files(kept.fresh(sent.messages))
    in_thread: list[bool] = []

    def encode() -> bytes:
        in_thread.append(threading.current_thread() is not threading.main_thread())
        return b""

    await encode_off_loop(encode, sent, kept)
    kept.values(sent.messages)
    sent.messages.append(Message(role="user", content=[TextBlock(text="and this?"),
                                                       *sent.messages[0].attached]))  # fmt: skip
    await encode_off_loop(encode, sent, kept)
    assert in_thread == [False, True]
