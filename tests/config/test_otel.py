"""The OpenTelemetry variables, read with the meanings the specification gives them; a bad
value is one line naming the variable, and never shows a header's secret."""

from __future__ import annotations

import pytest

from bot.config.otel import otel_config
from bot.config.settings import ConfigError


def test_no_endpoint_means_no_export() -> None:
    assert otel_config({}) is None
    assert otel_config({"OTEL_SERVICE_NAME": "chat"}) is None


def test_the_base_endpoint_gets_the_traces_path_and_the_traces_endpoint_is_taken_as_it_is() -> None:
    config = otel_config({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"})
    assert config is not None and config.endpoint == "http://collector:4318/v1/traces"
    both = otel_config({
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://traces.example/otlp/in",
    })  # fmt: skip
    assert both is not None and both.endpoint == "https://traces.example/otlp/in"


def test_defaults_headers_resource_and_content() -> None:
    config = otel_config({
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
        "OTEL_EXPORTER_OTLP_HEADERS": "api-key=s%3Dcret, x-team=ops",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod,service.namespace=chat",
    })  # fmt: skip
    assert config is not None
    assert config.service_name == "parley"
    assert dict(config.headers) == {"api-key": "s=cret", "x-team": "ops"}
    assert dict(config.resource) == {"deployment.environment": "prod", "service.namespace": "chat"}
    assert config.capture_content is False
    assert config.timeout_s == 10.0
    assert "s=cret" not in repr(config)
    named = otel_config({
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
        "OTEL_SERVICE_NAME": "bots",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "TRUE",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2500",
    })  # fmt: skip
    assert named is not None and named.service_name == "bots"
    assert named.capture_content is True and named.timeout_s == 2.5


def test_switched_off_by_the_sdks_own_switches() -> None:
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}
    assert otel_config({**endpoint, "OTEL_SDK_DISABLED": "true"}) is None
    assert otel_config({**endpoint, "OTEL_TRACES_EXPORTER": "none"}) is None


def test_the_endpoint_shown_in_logs_has_no_credentials() -> None:
    config = otel_config({"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:pw@c.example:4318/x?k=1"})
    assert config is not None
    assert config.shown_endpoint == "https://c.example:4318/x/v1/traces"


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", "http:// or https://"),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:port", "not a URL"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "only http/protobuf"),
        ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "yes", "true or false"),
        ("OTEL_RESOURCE_ATTRIBUTES", "team", "'team' is not key=value"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon", "milliseconds"),
        ("OTEL_TRACES_EXPORTER", "zipkin", "only otlp"),
    ],
)
def test_a_bad_value_is_one_line_naming_its_variable(variable: str, value: str, said: str) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", variable: value}
    with pytest.raises(ConfigError) as raised:
        otel_config(env)
    message = str(raised.value)
    assert message.startswith(f"{variable}: ") and said in message and "\n" not in message


def test_a_bad_header_is_named_by_its_place_not_its_content() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
        "OTEL_EXPORTER_OTLP_HEADERS": "a=1,sk-secret",
    }
    with pytest.raises(ConfigError) as raised:
        otel_config(env)
    assert str(raised.value) == "OTEL_EXPORTER_OTLP_HEADERS: item 2 is not key=value"
