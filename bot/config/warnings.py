"""Settings Parley can run with but an operator hardly meant: said in one line each when a
process starts, and the process goes on.

- A `PARLEY_` variable that no setting reads, in the environment or in `.env`. Settings
  ignore what they do not know, so a typo (`PARLEY_MAX_ITERATONS`) would leave the default
  in force without a word; the line names the closest setting (difflib). Values are never
  shown: the variable may hold a secret. One shaped like a tool's own setting
  (`PARLEY_TOOL_<NAME>_<KEY>`) is left to the process that builds the tools, which knows
  their names and says it only if no tool there claims it (`unclaimed_variables`).
- A `PARLEY_FETCH_ALLOW_HOSTS` entry that opens `web_fetch` to the machine itself (its
  loopback, the unspecified address, `localhost`), to a cloud metadata service, or to more
  than one private range at once (`0.0.0.0/0`, `::/0`). An allowed network is trusted whole, so such
  an entry undoes the guard it was meant to loosen (`bot.tools.web.guard`).
- Voice notes to transcribe (PARLEY_TRANSCRIBE_MODEL) and no `ffmpeg` on PATH: the recordings
  an endpoint does not take as they are (video notes, WebM, AAC) cannot be converted.
- Replies said aloud (PARLEY_SPEECH_MODEL) and no `ffmpeg`: an endpoint that answers anything
  but Opus (many local servers make MP3 or WAV) gives no voice note.
- PARLEY_VOICE_REPLIES on or spoken without PARLEY_SPEECH_MODEL: nothing says the replies.
- PARLEY_DM_POLICY=pairing and no PARLEY_ADMINS: strangers get codes nobody in a chat may
  approve (`parley pair approve` still can).

A process that says them marks its environment (`WARNED`), so the processes it starts
(`parley up` starts a worker, the scheduler and the web process) do not say them again.
"""

from __future__ import annotations

import difflib
import ipaddress
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from dotenv import dotenv_values
from pydantic import AliasChoices

from bot.config.secret_files import SUFFIX
from bot.config.settings import ENV_PREFIX, TOOL_PREFIX, Settings, secret_variables

WARNED = "_PARLEY_SETTINGS_WARNED"
ENV_FILE = Path(str(Settings.model_config.get("env_file")))  # where Settings reads it
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Addresses = dict[str, tuple[str, ...]]
_V4: Addresses = {
    "this machine": ("127.0.0.1", "0.0.0.0"),
    "a cloud metadata service": ("169.254.169.254", "100.100.100.200"),
}
_V6: Addresses = {"this machine": ("::1", "::"), "a cloud metadata service": ("fd00:ec2::254",)}
_NAT64 = int(ipaddress.IPv6Address("64:ff9b::"))
PRIVATE = tuple(
    ipaddress.ip_network(block)
    for block in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "169.254.0.0/16",
        "fc00::/7",
        "fe80::/10",
    )
)


def known_variables() -> list[str]:
    """Every variable a setting reads, upper case (the names are not case-sensitive), the
    secrets' `_FILE` variables among them."""
    names = [variable + SUFFIX for variable in secret_variables().values()]
    for name, info in Settings.model_fields.items():
        alias = info.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else []
        names += [str(c).upper() for c in choices if str(c).isupper()] or [
            ENV_PREFIX + name.upper()
        ]
    return names


def _unknown(name: str, known: list[str], where: str, what: str = "a setting") -> str:
    """The line for `name`; compared without the prefix every candidate shares, which would
    make any two names look alike."""
    tails = {n.removeprefix(ENV_PREFIX): n for n in known}
    closest = difflib.get_close_matches(name.upper().removeprefix(ENV_PREFIX), list(tails), n=1)
    hint = f" (did you mean {tails[closest[0]]}?)" if closest else ""
    return f"{name}{where} is not {what}{hint}; it is ignored"


def tool_shaped(name: str) -> bool:
    """Whether `name` may be a tool's own setting: `PARLEY_TOOL_<NAME>_<KEY>`."""
    rest = name.upper().removeprefix(TOOL_PREFIX)
    return rest != name.upper() and "_" in rest.strip("_")


def unknown_variables(environ: Mapping[str, str], env_file: Path | None) -> list[str]:
    """A line for each `PARLEY_` variable no setting reads and no tool may: the
    environment's, then the `.env` file's not also in the environment."""
    known = known_variables()

    def unknown(name: str) -> bool:
        upper = name.upper()
        return upper.startswith(ENV_PREFIX) and upper not in known and not tool_shaped(upper)

    lines = [_unknown(name, known, "") for name in sorted(environ) if unknown(name)]
    if env_file is not None and env_file.is_file():
        seen = {name.upper() for name in environ}
        for name in sorted(dotenv_values(env_file)):
            if unknown(name) and name.upper() not in seen:
                lines.append(_unknown(name, known, f" (in {env_file.name})"))
    return lines


def unclaimed_variables(names: Iterable[str], claimed: Callable[[str], bool]) -> list[str]:
    """A line for each variable shaped like a tool's own setting (`PARLEY_TOOL_<NAME>_<KEY>`)
    that neither a setting reads nor a tool claims, given where the tools are known."""
    known = known_variables()
    return [
        _unknown(name, known, "", "a setting nor a tool's")
        for name in sorted(names)
        if tool_shaped(name) and name.upper() not in known and not claimed(name.upper())
    ]


def _sentinels() -> dict[str, list[ipaddress.IPv4Address | ipaddress.IPv6Address]]:
    """The addresses no allowed network should hold, by what they reach: IPv4 ones also as
    IPv6 addresses that carry them (mapped, compatible, NAT64)."""
    found: dict[str, list[ipaddress.IPv4Address | ipaddress.IPv6Address]] = {}
    for what, texts in _V4.items():
        for value in (int(ipaddress.IPv4Address(text)) for text in texts):
            found.setdefault(what, []).extend(
                [ipaddress.IPv4Address(value)]
                + [ipaddress.IPv6Address(n) for n in (value, 0xFFFF << 32 | value, _NAT64 | value)]
            )
    for what, texts in _V6.items():
        found.setdefault(what, []).extend(ipaddress.IPv6Address(text) for text in texts)
    return found


def _danger(network: Network) -> str | None:
    """What `network` opens that it should not, or None."""
    for what, addresses in _sentinels().items():
        if any(address in network for address in addresses):
            return what
    first, last = network.network_address, network.broadcast_address
    overlapping = [block for block in PRIVATE if block.overlaps(network)]
    if overlapping and not any(first in block and last in block for block in overlapping):
        return "several private networks at once"
    return None


def broad_networks(entries: Iterable[str]) -> list[str]:
    """A line for each allowlist entry that opens more than an internal host or network."""
    lines = []
    for entry in entries:
        name = entry.strip().lower().removeprefix("*.").rstrip(".")
        try:
            what = _danger(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:  # a host name, or a mistake the allowlist itself refuses
            what = "this machine" if name == "localhost" or name.endswith(".localhost") else None
        if what is not None:
            lines.append(
                f"PARLEY_FETCH_ALLOW_HOSTS: {entry.strip()} lets web_fetch reach {what}; "
                "allow only the internal hosts and networks it needs"
            )
    return lines


def settings_warnings(
    settings: Settings, environ: Mapping[str, str], env_file: Path | None = ENV_FILE
) -> list[str]:
    """Everything to warn about, one line each; nothing when a parent process said it."""
    if environ.get(WARNED):
        return []
    lines = unknown_variables(environ, env_file) + broad_networks(settings.fetch_allow_hosts)
    return lines + missing_programs(settings) + unspoken(settings) + nobody_pairs(settings)


def unspoken(settings: Settings) -> list[str]:
    """Replies meant to be said with nothing to say them."""
    if settings.voice_replies == "off" or settings.speech_model is not None:
        return []
    return [
        f"PARLEY_VOICE_REPLIES is {settings.voice_replies} but PARLEY_SPEECH_MODEL is unset: "
        "no reply is said aloud"
    ]


def nobody_pairs(settings: Settings) -> list[str]:
    """Pairing with nobody to approve a code in a chat."""
    if settings.dm_policy != "pairing" or settings.admins:
        return []
    return [
        "PARLEY_DM_POLICY is pairing but PARLEY_ADMINS is empty: no one can /pair in a chat; "
        "approve codes with `parley pair approve CODE`"
    ]


def missing_programs(settings: Settings) -> list[str]:
    """What the settings ask of this machine that it does not have."""
    if shutil.which("ffmpeg") is not None:
        return []
    install = "(apt-get install ffmpeg, or pip install 'parley[ffmpeg]')"
    lines = []
    if settings.transcribe_model is not None:
        lines.append(
            "PARLEY_TRANSCRIBE_MODEL is set but ffmpeg is not installed: video notes and the "
            f"recordings an endpoint does not take as they are will not be transcribed {install}"
        )
    if settings.speech_model is not None:
        lines.append(
            "PARLEY_SPEECH_MODEL is set but ffmpeg is not installed: an endpoint that answers "
            f"anything but Opus gives no voice note {install}"
        )
    return lines
