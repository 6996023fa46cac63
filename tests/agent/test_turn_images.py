"""The images the person sent in a turn reach its tools' context (`ToolContext.images`), and
an older turn's never do; `generate_image` edits the one the person sent, through the real
agent, the fake model and the fake images endpoint, and the tokens the picture cost are the
turn's."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.files.store import FileStore
from bot.tools.base import ToolContext, tool
from bot.vocabulary import events as ev
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage
from tests.agent.conftest import MakeAgent, collect, completed, of_type
from tests.fakes.llm import OPENAI_KEY, FakeLLM, Reply, ToolCallSpec
from tests.support.images import image_bytes


@tool
def peek(ctx: ToolContext) -> str:
    """Name the images the call's context holds."""
    return ",".join(ref.name for ref in ctx.images) or "none"


def peeked() -> Reply:
    return Reply(tool_calls=[ToolCallSpec("peek", {})])


@pytest.mark.parametrize("api", ["anthropic"])
async def test_a_turns_images_are_in_its_tools_context_and_the_next_turns_are_not(
    fake_llm: FakeLLM, make_agent: MakeAgent, tmp_path: Path
) -> None:
    agent = make_agent(tools=[peek], files_dir=tmp_path)
    store = FileStore(tmp_path)
    first = store.put(image_bytes((30, 20)), "image/png", "first.png")
    second = store.put(image_bytes((20, 30), "JPEG"), "image/jpeg", "second.jpg")
    fake_llm.enqueue(peeked(), Reply(text="Two."), peeked(), Reply(text="None."))
    state = SessionState()
    await collect(agent, state, "look", attachments=(first, second))
    await collect(agent, state, "and now?")
    told = [r.tool_results() for r in fake_llm.requests if r.tool_results()]
    assert [[content for _, content in results] for results in told] == [
        ["first.png,second.jpg"],
        ["none"],
    ]


@pytest.mark.parametrize("api", ["anthropic"])
async def test_an_edit_changes_the_persons_photo_and_its_tokens_are_the_turns(
    fake_llm: FakeLLM, make_agent: MakeAgent, tmp_path: Path
) -> None:
    agent = make_agent(
        files_dir=tmp_path,
        image_model="gpt-image-1",
        image_base_url=fake_llm.openai_base_url,
        image_api_key=OPENAI_KEY,
    )
    photo = image_bytes((64, 48), "JPEG")
    ref = FileStore(tmp_path).put(photo, "image/jpeg", "cat.jpg")
    edit = ToolCallSpec("generate_image", {"prompt": "Give the cat a hat", "edit": True})
    fake_llm.enqueue(Reply(tool_calls=[edit]), Reply(text="Here is your cat with a hat."))
    events = await collect(agent, SessionState(), "a hat please", attachments=(ref,))
    [asked] = fake_llm.images.requests
    assert asked.files == (("image", "image.jpg", "image/jpeg", photo),)
    [sent] = of_type(events, ev.FileSent)
    assert (sent.file.name, sent.file.media_type) == ("image.png", "image/png")
    assert FileStore(tmp_path).read(sent.file).startswith(b"\x89PNG")
    chat = sum((e.usage for e in of_type(events, ev.ModelAnswered)), Usage())
    assert completed(events).usage == chat + Usage(input_tokens=4 + 323, output_tokens=1056)
    [(_, told)] = fake_llm.requests[1].tool_results()
    assert told.startswith("Changed the person's image with gpt-image-1: 1024x1024 PNG.\n")
    assert "image.png" in told and "was handed to the chat" in told
