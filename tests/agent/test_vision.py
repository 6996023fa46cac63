"""A model without vision: the images it refuses become sentences, it answers from the words,
the person is told once, and the session's next turns send it the sentences straight away."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.agent.loop import UNSEEN_NOTE
from bot.files.store import FileStore
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, shown_text
from tests.fakes.llm import FakeLLM, Reply
from tests.support.images import image_bytes


@pytest.mark.parametrize("api", ["openai"])
async def test_a_model_without_vision_reads_a_sentence_for_each_image(
    fake_llm: FakeLLM, make_agent: MakeAgent, tmp_path: Path
) -> None:
    agent = make_agent(model="gpt-3.5-turbo", files_dir=tmp_path)
    photo = FileStore(tmp_path).put(image_bytes((64, 48), "PNG"), "image/png", "cat.png")
    fake_llm.responder = lambda request: Reply(text="From your words: a cat.")
    state = SessionState()
    events = await collect(agent, state, "what is this?", attachments=(photo,))
    assert completed(events).finish_reason == "end_turn"
    assert shown_text(events) == f"From your words: a cat.\n\n_{UNSEEN_NOTE}_"
    refused, answered = fake_llm.requests
    assert refused.images() and [r for r, _ in fake_llm.rejected] == [refused]
    assert answered.images() == []
    assert "“cat.png”: this model cannot see images" in answered.last_user_text()
    events = await collect(agent, state, "and now?")
    assert len(fake_llm.requests) == 3 and len(fake_llm.rejected) == 1  # no refusal again
    assert UNSEEN_NOTE not in shown_text(events)
