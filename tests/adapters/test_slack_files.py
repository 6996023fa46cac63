"""Which addresses a Slack file is downloaded from: only Slack's own hosts, so the bot token
goes nowhere else; and the event's file objects read strictly."""

from __future__ import annotations

import pytest

from adapters.slack.files import SharedFile, _read, allowed

API = "https://slack.com/api/"


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://files.slack.com/files-pri/T1-F1/download/a.png", True),
        ("https://slack.com/files-pri/T1-F1/download/a.png", True),
        ("http://files.slack.com/files-pri/T1-F1/download/a.png", False),  # not over TLS
        ("https://files.slack.com.evil.example/a.png", False),
        ("https://evil.example/?files.slack.com", False),
        ("https://user@files.slack.com/a.png", False),
        ("https://files.slack.com:8443/a.png", False),
    ],
)
def test_only_slack_s_own_hosts_get_the_token(url: str, ok: bool) -> None:
    assert allowed(url, API) is ok


def test_a_self_hosted_or_fake_api_s_host_is_its_own() -> None:
    assert allowed("http://127.0.0.1:8000/files-pri/T1-F1/x", "http://127.0.0.1:8000/api/")
    assert not allowed("http://127.0.0.1:9000/files-pri/T1-F1/x", "http://127.0.0.1:8000/api/")


def test_a_file_object_is_read_strictly() -> None:
    assert _read({"name": "a.png", "size": 12, "url_private_download": API}) == SharedFile(
        name="a.png", size=12, url_private_download=API
    )
    assert _read({"name": "a.png", "size": "12"}) == SharedFile()  # a string is not a size
    assert _read("not a file") == SharedFile()
