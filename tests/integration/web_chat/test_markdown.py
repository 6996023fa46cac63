"""The web chat renders the model's markdown as it streams: a table, a highlighted code block
(also while its fence is still open) and a link that opens in a tab of its own."""

from __future__ import annotations

import asyncio
from typing import Any

from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import Reply
from tests.support.browser import screenshot, severe_logs, wait_for
from tests.support.chat_page import idle, run, say, script
from tests.support.stack import ROOT, Stack

REPLY = """Here is what I found:

| Name | Score |
|------|------:|
| Ada  | 42    |

```python
def greet(name):
    return f"hello {name}"
```

See [the docs](https://example.com/docs) for more."""
CHUNK = 4
# The model pauses inside the code block: the fence is open, the link not yet written (the
# fake API's stream opens with three events before the text's).
PAUSE_AT = 3 + REPLY.index('"hello') // CHUNK
PNG = b"\x89PNG\r\n\x1a\n"


def rendered(browser: WebDriver) -> dict[str, Any] | None:
    """What the newest bot bubble shows, as elements: table cells, code, keywords, links."""
    return script(  # type: ignore[no-any-return]
        browser,
        """const bubble = [...document.querySelectorAll('#log .msg.bot')].pop();
        if (!bubble) return null;
        const all = (css) => [...bubble.querySelectorAll(css)];
        const code = bubble.querySelector('pre code');
        return {
          cells: all('th, td').map(e => e.textContent.trim()),
          code: code ? code.textContent : null,
          codeClass: code ? code.className : null,
          keywords: all('pre code .hljs-keyword').map(e => e.textContent),
          strings: all('pre code .hljs-string').length,
          links: all('a').map(a => ({href: a.getAttribute('href'), text: a.textContent,
                                     target: a.target, rel: a.rel})),
          text: bubble.innerText,
        };""",
    )


async def test_markdown_is_rendered_while_it_streams(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    gate = asyncio.Event()
    stack.fake.enqueue(Reply(text=REPLY, chunk_size=CHUNK, gate=gate, gate_after=PAUSE_AT))
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "show me")

    def mid_stream(browser: WebDriver) -> dict[str, Any] | None:
        shown = rendered(browser)
        return shown if shown and shown["code"] and "return" in shown["code"] else None

    # Paused in the middle of the code block: the table is a table already, and the open
    # fence is shown (and highlighted) as code, not as backticks.
    partial = await wait_for(browser, mid_stream, "the code block, still open")
    assert not await run(browser, idle, browser)  # the reply is still streaming
    assert partial["cells"] == ["Name", "Score", "Ada", "42"]
    assert partial["code"].startswith("def greet(name):\n    return")
    assert {"def", "return"} <= set(partial["keywords"]) and "```" not in partial["text"]
    assert partial["links"] == []

    gate.set()
    await wait_for(browser, idle, "the end of the reply")
    whole = await run(browser, rendered, browser)
    assert whole is not None
    assert whole["code"] == 'def greet(name):\n    return f"hello {name}"'
    assert "language-python" in whole["codeClass"]
    assert {"def", "return"} <= set(whole["keywords"]) and whole["strings"] >= 1
    assert whole["links"] == [
        {
            "href": "https://example.com/docs",
            "text": "the docs",
            "target": "_blank",
            "rel": "noopener noreferrer",
        }
    ]
    assert (
        "|" not in whole["text"]
        and "```" not in whole["text"]
        and "[the docs]" not in whole["text"]
    )
    assert await run(browser, severe_logs, browser) == []

    picture = await run(browser, screenshot, browser, "chat.png")
    assert picture == ROOT / "test-artifacts" / "chat.png"
    data = picture.read_bytes()
    assert data.startswith(PNG) and len(data) > 1000
