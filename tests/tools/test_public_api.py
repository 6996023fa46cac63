"""`bot.tools` is the API tool modules are written against, so what it exports is pinned.

Adding or removing a name is a decision about what Parley promises its tool authors, and
this test makes that decision deliberate. Each exported object must also say it lives in a
public module, from which it can be imported again: that is the path tracebacks, reprs and
pickles (a tool that runs in a helper process) use, so it must not be a private one. The
context's fields are pinned the same way: what a tool may know is part of the promise.
"""

from __future__ import annotations

import dataclasses
import importlib
import types

import bot.tools

PROMISED = [
    "Attachment",
    "FileRoom",
    "Sender",
    "TemporaryFailure",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "tool",
]


def test_the_exported_names_are_pinned() -> None:
    assert bot.tools.__all__ == PROMISED


def test_every_public_name_of_the_package_is_exported() -> None:
    # Submodules become attributes of the package once imported; they are not exports.
    public = sorted(
        name
        for name, value in vars(bot.tools).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    )
    assert public == sorted(bot.tools.__all__)


def test_each_export_lives_in_a_public_module_it_can_be_imported_from() -> None:
    for name in bot.tools.__all__:
        exported = getattr(bot.tools, name)
        module = exported.__module__
        assert module.split(".")[0] == "bot", f"{name} comes from outside Parley: {module}"
        private = [part for part in module.split(".") if part.startswith("_")]
        assert not private, f"{name} says it lives in the private module {module}"
        found = getattr(importlib.import_module(module), exported.__qualname__)
        assert found is exported, f"{module}.{exported.__qualname__} is not bot.tools.{name}"


# What a tool is told about its call. A field more is a promise to tool authors, and
# whatever it holds reaches every tool, theirs included: add one only on purpose.
CONTEXT = [
    "session_key",
    "user",
    "platform",
    "chat_kind",
    "reply_to",
    "preferences",
    "default_timezone",
    "workspace",
    "config",
    "call_id",  # the call's own id: what makes a call's work findable again after a crash
    "files",  # the room the turn has left for files: what a tool may read for the person
    # the images the person sent in the turn, by reference (no bytes): what a tool may work
    # on for them (`generate_image` edits the last); read from a file store it is built with
    "images",
]


def test_the_context_s_fields_are_pinned() -> None:
    assert [f.name for f in dataclasses.fields(bot.tools.ToolContext)] == CONTEXT
