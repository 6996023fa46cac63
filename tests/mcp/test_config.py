"""The MCP servers' file: the format other clients write, Parley's keys, and one clear line
for each mistake, naming the file, the server and the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.config.settings import ConfigError, Settings
from bot.mcp.config import load_mcp_config, parse_mcp_config

GOOD = {"command": "server-files", "args": ["/srv"]}


def problem(servers: object, environ: dict[str, str] | None = None) -> str:
    text = servers if isinstance(servers, str) else json.dumps({"mcpServers": servers})
    with pytest.raises(ConfigError) as raised:
        parse_mcp_config(text, "mcp.json", environ or {})
    message = str(raised.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ('{"mcpServers": {"files": {', "mcp.json: not valid JSON (line 1, column 27"),
        ("[]", 'mcp.json: must be an object with "mcpServers"'),
        ('{"servers": {}}', 'mcp.json: needs "mcpServers": {"NAME": {...}}'),
        ('{"mcpServers": {}, "inputs": []}', 'mcp.json: unknown key "inputs"'),
        ({"files": {**GOOD, "comand": "x"}}, 'server "files": unknown key "comand"'),
        ({"files": {"command": 7}}, 'server "files": "command" must be a string'),
        ({"files": {"args": ["x"]}}, 'server "files": needs "command" (a program to run) or "url"'),
        (
            {"files": {**GOOD, "url": "https://example.com/mcp"}},
            'server "files": has both "command" and "url"; give one',
        ),
        ({"fi les": GOOD}, 'server "fi les": the name may only use letters, digits, _ and -'),
        ({"a__b": GOOD}, 'server "a__b": the name may only use letters, digits, _ and - (no __)'),
        ({"x" * 62: GOOD}, "the name is too long"),
        (
            {"files": {**GOOD, "trust": "always"}},
            'server "files": "trust" must be one of "allow", "ask" or "deny"',
        ),
        ({"files": {**GOOD, "timeout": 0}}, 'server "files": "timeout" must be greater than 0'),
        ({"files": {**GOOD, "tools": {"allow": "*"}}}, '"tools.allow" must be a list'),
        ({"web": {"url": "ftp://example.com"}}, 'server "web": "url" must be an http(s) URL'),
        ({"web": {"url": "https://x.org/mcp", "cwd": "/"}}, '"cwd" only applies to a server'),
        (
            {"files": {**GOOD, "headers": {"A": "b"}}},
            '"headers" only apply to a server with a "url"',
        ),
        ({"files": {**GOOD, "type": "sse"}}, '"command" runs a stdio server, not sse'),
        ({"files": {**GOOD, "env": {"TOKEN": "${NOT_SET}"}}}, 'env "TOKEN" uses ${NOT_SET}'),
    ],
)
def test_a_mistake_is_one_line_naming_the_file_the_server_and_the_problem(
    servers: object, expected: str
) -> None:
    message = problem(servers)
    assert message.startswith("PARLEY_MCP_CONFIG: mcp.json: ")
    assert expected in message


def test_values_of_env_and_headers_come_from_the_environment_and_stay_secret() -> None:
    servers = {
        "files": {**GOOD, "env": {"TOKEN": "${FILES_TOKEN}", "MODE": "ro"}},
        "web": {"url": "https://x.org/mcp", "headers": {"Authorization": "Bearer ${WEB_KEY}"}},
    }
    environ = {"FILES_TOKEN": "tok-123", "WEB_KEY": "key-456"}
    parsed = parse_mcp_config(json.dumps({"mcpServers": servers}), "mcp.json", environ)
    files, web = parsed.servers["files"], parsed.servers["web"]
    assert files.env["TOKEN"].get_secret_value() == "tok-123"
    assert files.env["MODE"].get_secret_value() == "ro"
    assert web.headers["Authorization"].get_secret_value() == "Bearer key-456"
    assert "tok-123" not in repr(parsed) and "key-456" not in repr(parsed)
    assert sorted(files.secrets() + web.secrets()) == ["Bearer key-456", "ro", "tok-123"]


def test_the_transport_follows_command_url_and_what_other_clients_write() -> None:
    servers = {
        "local": GOOD,
        "remote": {"url": "https://x.org/mcp"},
        "old": {"url": "https://x.org/sse", "transport": "sse"},
        "older": {"url": "https://x.org/sse", "type": "sse"},
        "typed": {"url": "https://x.org/mcp", "type": "streamable-http"},
    }
    parsed = parse_mcp_config(json.dumps({"mcpServers": servers}), "mcp.json", {})
    kinds = {name: server.kind for name, server in parsed.servers.items()}
    assert kinds == {
        "local": "stdio",
        "remote": "http",
        "old": "sse",
        "older": "sse",
        "typed": "http",
    }
    local = parsed.servers["local"]
    assert (local.trust, local.disabled, local.timeout) == ("ask", False, None)
    assert (local.tools.allow, local.tools.deny) == (["*"], [])


def test_without_the_variable_mcp_json_here_is_read_if_there_is_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(_env_file=None)
    assert load_mcp_config(settings) is None
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"files": GOOD}}))
    loaded = load_mcp_config(settings)
    assert loaded is not None and list(loaded.servers) == ["files"]


def test_a_named_file_that_is_missing_stops_the_worker(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, mcp_config=tmp_path / "nope.json")
    with pytest.raises(ConfigError, match=r"^PARLEY_MCP_CONFIG: .*nope.json: no such file$"):
        load_mcp_config(settings)
