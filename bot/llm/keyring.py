"""Several keys for one model API: a key the API answered 429 rests, one it refused is put
aside, and the call goes to the next key at once, before any retry or fallback model.

`ANTHROPIC_API_KEY` and `OPENAI_API_KEY` may each hold several keys, separated by commas
(`bot.config.values.keys_of`): an organisation's rate limits are per key, and a key can be
revoked while the others still work. Each key has its own client (`KeyRing.of` builds one
provider a key), so their connections and rate limits stay apart.

A call goes to the first key that is not resting, in the order the keys were given. A 429
(or a 529, the API overloaded for that key) before anything was streamed rests the key for
what the API said (`retry-after`), or `REST_S`; a 401 or 403 puts it aside for `BAD_S`, in case
it was only being rotated. Either way the same request goes to the next key, without a wait,
so a rate-limited key costs no more than the one refused request. When every key rests, the
call fails with the last key's error, and the retry policy and the fallback models take over
(`bot.llm.retry`, `bot.agent.model_call`). A failure once events were streamed is not the
key's to answer: it goes up as it came. The resting state is each process's own.

Each call is told to `count` by key and outcome (the metrics, `parley_provider_key_calls_total`,
which the process hands in), the key named by its place in the list (`1`, `2`...), never by
any part of the key itself.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence

from bot.llm.base import ModelRequest, Provider
from bot.llm.errors import ProviderError
from bot.llm.events import ProviderEvent

REST_S = 30.0  # a rate-limited key's rest when the API did not say how long
BAD_S = 600.0  # a refused key's: long, yet a key being rotated comes back
RESTING = frozenset({429, 529})
REFUSED = frozenset({401, 403})
# (API, key's place from 1, outcome: ok, rate_limited, refused or failed)
KeyCount = Callable[[str, str, str], None]


def uncounted(provider: str, key: str, outcome: str) -> None:
    return None


class KeyRing:
    """A `Provider` over one provider a key (see the module docstring)."""

    def __init__(
        self,
        providers: Sequence[Provider],
        count: KeyCount = uncounted,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.providers = list(providers)
        self.name = self.providers[0].name
        self.count = count
        self._clock = clock
        self._rests = [0.0] * len(self.providers)  # until when each key rests

    @classmethod
    def of(
        cls, keys: Sequence[str], build: Callable[[str], Provider], count: KeyCount = uncounted
    ) -> Provider:
        """One provider for `keys`: the key's own when there is one."""
        providers = [build(key) for key in keys]
        return providers[0] if len(providers) == 1 else cls(providers, count)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        last: ProviderError | None = None
        for index in self._order():
            streamed = False
            try:
                async for event in self.providers[index].stream(request):
                    streamed = True
                    yield event
            except ProviderError as exc:
                rested = not streamed and self._rest(index, exc)
                self._count(index, _outcome(exc) if rested else "failed")
                if not rested:
                    raise
                last = exc
                continue
            self._count(index, "ok")
            return
        assert last is not None  # `_order` names at least one key
        raise last

    async def aclose(self) -> None:
        for provider in self.providers:
            await provider.aclose()

    def _order(self) -> list[int]:
        """The keys not resting, in their order; all of them, soonest back first, when
        every one rests (the call fails on them as the API says, for the retry to wait)."""
        now = self._clock()
        ready = [i for i, until in enumerate(self._rests) if until <= now]
        return ready or sorted(range(len(self._rests)), key=self._rests.__getitem__)[:1]

    def _rest(self, index: int, exc: ProviderError) -> bool:
        """Rest the key for `exc` if it is the key's (rate limited, refused); whether it was."""
        if exc.status in RESTING:
            self._rests[index] = self._clock() + (exc.retry_after or REST_S)
            return True
        if exc.status in REFUSED:
            self._rests[index] = self._clock() + BAD_S
            return True
        return False

    def _count(self, index: int, outcome: str) -> None:
        self.count(self.name, str(index + 1), outcome)


def _outcome(exc: ProviderError) -> str:
    return "refused" if exc.status in REFUSED else "rate_limited"
