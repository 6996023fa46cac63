"""aiogram, imported without building a validator for each of its Bot API types.

aiogram's models ask pydantic to defer their schemas (`defer_build=True`), but
`aiogram/types/__init__.py` ends with a loop that calls `model_rebuild` on every type, so
that each one's forward references (names its module imports only for type checkers)
resolve against all the others. That loop builds a complete validator for each of over 400
types, every one holding the whole tree of the types it contains, which takes about
2.4 s of CPU: two thirds of the cost of importing aiogram, paid at the start of every
`parley web` and, before its first reply, of every worker.

Here the loop's calls only record the namespace it passes; every aiogram model is then given
that namespace as the one pydantic resolves its names in, and pydantic builds a model's
validator the first time the model is used, as `defer_build` intends. One model's validator
holds the types it contains, so building it on use costs what aiogram's loop costs per type
(a message with everything it can carry: about 0.15 s), only for the types a process uses.
The models, their schemas and what they accept are the same as with aiogram's own loop
(`tests/adapters/test_telegram_sdk.py` compares them all).

`adapters/telegram/__init__.py` imports aiogram this way, so every module of the package
gets it; a process that imported aiogram before gets aiogram as it was, which works the same.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

PACKAGE = "aiogram"
_importing = threading.Lock()
_answer_models: list[type[BaseModel]] = []  # see _keep_answer_models


def import_aiogram() -> None:
    """Import aiogram with its types' validators left to be built on first use, and the
    models of its answers kept once made."""
    with _importing:
        if PACKAGE not in sys.modules:
            namespace = _import_recording_namespace()
            if namespace:
                for model in _models(BaseModel):
                    if model.__pydantic_parent_namespace__ is None:  # at module level
                        model.__pydantic_parent_namespace__ = namespace
        _keep_answer_models()


def _keep_answer_models() -> None:
    """Keep every `Response[...]` aiogram makes, once made.

    aiogram validates each Bot API answer with `Response[method.__returning__]`. pydantic
    keeps a generic model's parametrizations by weak reference only, and a class is held by
    a reference cycle of its own, so the collector's next young pass took `Response[Message]`
    and the next call made it again, its validator too: a millisecond of every call. There
    are no more of them than the Bot API has kinds of answer, a few dozen.
    """
    response = importlib.import_module(f"{PACKAGE}.methods.base").Response
    if "__pydantic_init_subclass__" in response.__dict__:
        return

    def keep(cls: type[BaseModel], /, **kwargs: Any) -> None:
        _answer_models.append(cls)  # pydantic calls it for each parametrization it makes
        super(response, cls).__pydantic_init_subclass__(**kwargs)

    response.__pydantic_init_subclass__ = classmethod(keep)


def _import_recording_namespace() -> dict[str, Any]:
    """Import aiogram while its types' `model_rebuild` calls only record their namespace.

    `BaseModel.model_rebuild` is replaced for the import's duration only, and only aiogram's
    calls that pass a namespace are held back: any other call, also from another thread
    meanwhile, goes through unchanged.
    """
    recorded: dict[str, Any] = {}
    original = BaseModel.__dict__["model_rebuild"]

    def recording(
        cls: type[BaseModel],
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: dict[str, Any] | None = None,
    ) -> bool | None:
        if _types_namespace is not None and not force and _is_aiogram(cls):
            recorded.update(_types_namespace)
            return None
        return original.__func__(  # type: ignore[no-any-return]
            cls,
            force=force,
            raise_errors=raise_errors,
            _parent_namespace_depth=_parent_namespace_depth + 1,
            _types_namespace=_types_namespace,
        )

    BaseModel.model_rebuild = classmethod(recording)  # type: ignore[method-assign, assignment]
    try:
        importlib.import_module(PACKAGE)
        importlib.import_module(f"{PACKAGE}.types")
    finally:
        BaseModel.model_rebuild = original  # type: ignore[method-assign]
    return recorded


def _is_aiogram(cls: type) -> bool:
    return cls.__module__.partition(".")[0] == PACKAGE


def _models(base: type[BaseModel]) -> Iterator[type[BaseModel]]:
    """Every aiogram model: the subclasses of `base` defined in aiogram's modules."""
    seen: set[type[BaseModel]] = set()
    pending = [base]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                pending.append(sub)
                if _is_aiogram(sub):
                    yield sub
