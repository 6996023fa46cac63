"""One error type for every provider, carrying what the retry policy needs to know."""

from __future__ import annotations

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
DEPLOYMENT_STATUS = frozenset({401, 403, 404})  # the key, its rights, the model's name


class ProviderError(Exception):
    """A failed model call. The message is safe to show: it never contains credentials."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after

    @property
    def invalid_request(self) -> bool:
        """Refused for what was asked (a 4xx other than a timeout, a conflict or a rate
        limit): the same request would be refused again. A refused key, a missing permission
        or an unknown model (401, 403, 404) are the deployment's to fix, not the request's."""
        status = self.status
        return (
            status is not None
            and 400 <= status < 500
            and status not in RETRYABLE_STATUS
            and status not in DEPLOYMENT_STATUS
        )


def network_error(api: str, exc: Exception) -> ProviderError:
    """A retryable error for a failed connection, a timeout or a stream cut off mid-way."""
    name = type(exc).__name__
    if "Timeout" in name:
        return ProviderError(f"{api} API timed out ({name})", retryable=True)
    return ProviderError(f"{api} API connection failed ({name})", retryable=True)


def parse_retry_after(headers: object) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds form); None if absent."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / scale)
        except ValueError:
            continue
    return None
