"""docker-compose.yml, the Dockerfile and .dockerignore, checked without a Docker engine: the
YAML parses, images are pinned, environment names are ones the settings read, commands are
real `schemarag` commands, the services have health checks and share the state folder."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from schemarag.cli import build_parser
from schemarag.settings import _ENV

ROOT = Path(__file__).resolve().parents[2]
#: Variables the schemarag image reads: the settings, the API options, offline model flags.
IMAGE_VARIABLES = {
    *_ENV.values(),
    "COHERE_API_KEY",
    "SCHEMARAG_LOG_QUESTIONS",
    "SCHEMARAG_MAX_BODY_BYTES",
    "SCHEMARAG_BODY_TIMEOUT",
    "SCHEMARAG_RELOAD_INTERVAL",
}
DOCKER_ONLY = {
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PIP_NO_CACHE_DIR",
    "PIP_DISABLE_PIP_VERSION_CHECK",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
}
#: Variables of the compose file itself (documented in its header and docs/OPERATIONS.md).
COMPOSE_VARIABLES = {
    "SCHEMARAG_DATA",
    "SCHEMARAG_SOURCES",
    "SCHEMARAG_BUILD_FLAGS",
    "SCHEMARAG_SERVE_FLAGS",
    "SCHEMARAG_API_PORT",
}
INTERPOLATION = re.compile(r"\$\{([A-Z0-9_]+)(?:(:?[-?])([^}]*))?\}")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    """(instruction, argument) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    pairs = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instruction, _, argument = line.partition(" ")
            pairs.append((instruction.upper(), argument.strip()))
    return pairs


def interpolate(text: str) -> str:
    """Compose's substitution with nothing set: defaults used, required ones given a value."""

    def value(match: re.Match[str]) -> str:
        kind, default = match.group(2), match.group(3) or ""
        if kind and kind.endswith("?"):
            return "required-value"
        return default if kind else ""

    return INTERPOLATION.sub(value, text)


def parses_as_schemarag(argv: list[str]) -> None:
    assert argv[0] == "schemarag", argv
    args = build_parser().parse_args(argv[1:])  # SystemExit (a failure) if it does not parse
    assert callable(args.func)


def test_compose_has_the_three_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"qdrant", "api", "indexer"}
    assert set(compose["volumes"]) == {"qdrant-data", "schemarag-state"}


def test_every_image_is_pinned(compose: dict[str, Any], dockerfile: list[tuple[str, str]]) -> None:
    images = [s["image"] for s in compose["services"].values()]
    images += [arg.split()[0] for ins, arg in dockerfile if ins == "FROM"]
    for image in images:
        name, _, tag = image.rpartition(":")
        assert name and tag and tag != "latest" and re.search(r"\d+\.\d+", tag), image
    assert compose["services"]["qdrant"]["image"] == "qdrant/qdrant:v1.14.1"


def test_environment_names_are_the_ones_the_settings_read(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        environment = service.get("environment", {})
        assert isinstance(environment, dict), name
        allowed = {"QDRANT__SERVICE__API_KEY"} if name == "qdrant" else IMAGE_VARIABLES
        assert set(environment) <= allowed, (name, set(environment) - allowed)
    text = (ROOT / "docker-compose.yml").read_text()
    referenced = {m.group(1) for m in INTERPOLATION.finditer(text)}
    assert referenced <= IMAGE_VARIABLES | COMPOSE_VARIABLES, referenced - IMAGE_VARIABLES
    operations = (ROOT / "docs" / "OPERATIONS.md").read_text()
    assert all(name in operations for name in COMPOSE_VARIABLES)


def test_keys_come_from_the_environment_and_are_required(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["qdrant"]["environment"]["QDRANT__SERVICE__API_KEY"].startswith(
        "${QDRANT_API_KEY:?"
    )
    assert services["api"]["environment"]["SCHEMARAG_API_KEY"].startswith("${SCHEMARAG_API_KEY:?")
    for name in ("api", "indexer"):
        assert services[name]["environment"]["QDRANT_API_KEY"].startswith("${QDRANT_API_KEY:?")


def test_dockerfile_environment_is_known(dockerfile: list[tuple[str, str]]) -> None:
    names = {
        assignment.split("=", 1)[0]
        for ins, arg in dockerfile
        if ins == "ENV"
        for assignment in shlex.split(arg)
    }
    assert names <= IMAGE_VARIABLES | DOCKER_ONLY, names - IMAGE_VARIABLES - DOCKER_ONLY


def test_commands_are_real_schemarag_commands(
    compose: dict[str, Any], dockerfile: list[tuple[str, str]]
) -> None:
    cmd = [json.loads(arg) for ins, arg in dockerfile if ins == "CMD"]
    assert len(cmd) == 1 and cmd[0][:2] == ["schemarag", "serve"]
    parses_as_schemarag(cmd[0])
    assert not [arg for ins, arg in dockerfile if ins == "ENTRYPOINT"]
    api = shlex.split(interpolate(compose["services"]["api"]["command"]))
    indexer = shlex.split(interpolate(compose["services"]["indexer"]["command"]))
    assert api[:2] == ["schemarag", "serve"] and indexer[:3] == ["schemarag", "index", "build"]
    for argv in (api, indexer):
        parses_as_schemarag(argv)
        assert argv[argv.index("--store") + 1] == "http://qdrant:6333"
    with_flags = compose["services"]["api"]["command"].replace(
        "${SCHEMARAG_SERVE_FLAGS:-}", "--source spider:/data/spider"
    )
    parses_as_schemarag(shlex.split(interpolate(with_flags)))


def test_non_loopback_api_has_a_key(compose: dict[str, Any]) -> None:
    api = compose["services"]["api"]
    assert "--host 0.0.0.0" in api["command"]
    assert "SCHEMARAG_API_KEY" in api["environment"]  # else `serve` refuses to start


def test_health_checks_and_start_order(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("qdrant", "api"):
        test = services[name]["healthcheck"]["test"]
        assert test[0] in ("CMD", "CMD-SHELL")
    assert "/readyz" in services["qdrant"]["healthcheck"]["test"][-1]
    assert "/readyz" in services["api"]["healthcheck"]["test"][-1]
    for name in ("api", "indexer"):
        assert services[name]["depends_on"]["qdrant"]["condition"] == "service_healthy"
    assert services["indexer"]["profiles"] == ["nightly"]


def test_api_and_indexer_share_the_state_folder_where_the_image_keeps_it(
    compose: dict[str, Any], dockerfile: list[tuple[str, str]]
) -> None:
    workdir = [arg for ins, arg in dockerfile if ins == "WORKDIR"][-1]
    state = f"{workdir}/.schemarag"  # the settings' defaults are relative: .schemarag/...
    for name in ("api", "indexer"):
        assert f"schemarag-state:{state}" in compose["services"][name]["volumes"]
    assert "qdrant-data:/qdrant/storage" in compose["services"]["qdrant"]["volumes"]
    volumes = [json.loads(arg) for ins, arg in dockerfile if ins == "VOLUME"]
    assert volumes == [[state]]


def test_dockerignore_keeps_the_image_small() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    ignored = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    assert {".git", ".venv", ".schemarag", "tests"} <= ignored
    copied = {
        source
        for _, arg in re.findall(r"^(COPY) (.+)$", (ROOT / "Dockerfile").read_text(), re.M)
        for source in arg.split()[:-1]
    }
    assert {"pyproject.toml", "schemarag", "retriever"} <= copied
    assert not copied & ignored
