"""``.oryxos/config.yaml``: the pydantic models, loading, and the plugin pre-scan.

Every section is a model with ``extra="forbid"`` so that a misspelt key is an error with a
suggestion, not silence. ``${VAR}`` is expanded in every value when the file is loaded (a
missing variable is an error naming file, key and line), except in secret fields (``api_key``,
``api_token``, ``secret`` ...), which stay :class:`~oryxos.secrets.SecretRef` until used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from oryxos.errors import ConfigError, Problem
from oryxos.secrets import SecretRef, attach_origins, is_secret_path
from oryxos.yamlfile import FileProblemError, load_model, parse_yaml

CONFIG_FILENAME = "config.yaml"


class Section(BaseModel):
    """Base of every config section: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=False)


class ProviderConfig(Section):
    """One entry of ``providers:`` — an explicit name → model mapping (no discovery by type)."""

    model: str = Field(description="litellm model string, e.g. deepseek/deepseek-chat")
    api_base: str | None = Field(default=None, description="base URL of the API")
    api_key: SecretRef | None = Field(default=None, description="usually ${SOME_API_KEY}")
    timeout: float = Field(default=60.0, gt=0, description="seconds per request")
    max_retries: int = Field(default=2, ge=0, le=10, description="retries on 429/5xx/timeouts")
    # Base of the exponential backoff between retries (seconds); Retry-After wins when sent.
    retry_backoff: float = Field(default=0.5, ge=0, le=60, description="backoff base, seconds")
    params: dict[str, Any] = Field(default_factory=dict, description="extra litellm parameters")
    # Another provider name, tried (with its own retries) when this one has failed for good.
    fallback: str | None = Field(default=None, description="provider to try when this one fails")


class StorageConfig(Section):
    backend: str = Field(default="peewee", description="storage plugin to use, by name")
    url: str = Field(default="sqlite:///.oryxos/oryxos.db", description="database URL")


class FileSandboxConfig(Section):
    allowed_paths: list[str] = Field(default_factory=list)


class ShellSandboxConfig(Section):
    allowed_commands: list[str] = Field(default_factory=list)
    timeout_seconds: float = Field(default=30.0, gt=0)
    max_output_bytes: int = Field(default=65536, gt=0)

    @field_validator("allowed_commands")
    @classmethod
    def _commands(cls, value: list[str]) -> list[str]:
        # an entry the sandbox would always refuse is a mistake worth reporting at load time
        from oryxos.sandbox import shell_entry_problem

        for entry in value:
            problem = shell_entry_problem(entry)
            if problem:
                raise ValueError(problem)
        return value


class HttpSandboxConfig(Section):
    allowed_domains: list[str] = Field(default_factory=list)
    allow_link_local: bool = Field(
        default=False, description="allow 169.254.0.0/16 and cloud metadata addresses"
    )

    @field_validator("allowed_domains")
    @classmethod
    def _domains(cls, value: list[str]) -> list[str]:
        from oryxos.sandbox import parse_host_pattern

        for entry in value:
            try:
                parse_host_pattern(entry)
            except ValueError as err:
                raise ValueError(
                    f"{entry!r} is not a host or *.domain entry ({err}); "
                    "e.g. api.example.com or '*.feishu.cn'"
                ) from None
        return value


class SandboxConfig(Section):
    file: FileSandboxConfig = Field(default_factory=FileSandboxConfig)
    shell: ShellSandboxConfig = Field(default_factory=ShellSandboxConfig)
    http: HttpSandboxConfig = Field(default_factory=HttpSandboxConfig)


class ServerConfig(Section):
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    threads: int = Field(default=64, ge=1, le=1024)
    api_token: SecretRef | None = None
    max_body_bytes: int = Field(default=1_048_576, gt=0)


class PluginsConfig(Section):
    disabled: list[str] = Field(default_factory=list, description="plugin names not to load")
    settings: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="free-form settings for third-party plugins, by name"
    )


class LoggingConfig(Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    max_bytes: int = Field(default=10 * 1024 * 1024, gt=0)
    backup_count: int = Field(default=5, ge=0)

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class ToolsConfig(Section):
    output_max_bytes: int = Field(default=65536, gt=0, description="longer output is truncated")


class MemoryConfig(Section):
    backend: str = Field(default="markdown", description="memory plugin to use, by name")
    max_prompt_chars: int = Field(default=4000, gt=0)


class McpConfig(Section):
    """MCP client settings; the servers themselves are listed in .oryxos/mcp_servers.yaml."""

    start_timeout_seconds: float = Field(
        default=30.0, gt=0, description="for a server to start and list its tools"
    )
    call_timeout_seconds: float = Field(default=60.0, gt=0, description="per tool call")
    restart_backoff_seconds: float = Field(
        default=1.0, ge=0, description="first delay between restarts of a failing server"
    )
    restart_backoff_max_seconds: float = Field(default=60.0, ge=0)


class NotifyConfig(Section):
    """Deliveries to notify channels (the channels themselves are stored, not configured)."""

    timeout_seconds: float = Field(default=10.0, gt=0, le=300, description="per HTTP request")
    retries: int = Field(default=1, ge=0, le=5, description="more attempts on 5xx/timeouts")


class HttpToolsConfig(Section):
    """Limits of the HTTP tools (http_get ... download_file, web_search); which hosts they may
    reach is ``sandbox.http``."""

    timeout_seconds: float = Field(default=30.0, gt=0, description="per request (connect+read)")
    max_response_bytes: int = Field(
        default=2 * 1024 * 1024, gt=0, description="body bytes read; the rest is cut"
    )
    max_download_bytes: int = Field(
        default=25 * 1024 * 1024, gt=0, description="download_file refuses larger files"
    )
    max_redirects: int = Field(default=5, ge=0, le=20)
    user_agent: str = Field(default="OryxOS (+https://github.com/oryxos/oryxos)")


class WebSearchConfig(Section):
    """The web_search tool's back-end; without one the tool is not offered to agents."""

    backend: Literal["searxng", "brave"] | None = Field(
        default=None, description="searxng (self-hosted) or brave (Brave Search API)"
    )
    url: str | None = Field(
        default=None,
        description="searxng: the instance's base URL; brave: defaults to the public endpoint",
    )
    api_key: SecretRef | None = Field(default=None, description="brave: ${BRAVE_API_KEY}")
    max_results: int = Field(default=5, ge=1, le=20)


class Config(Section):
    """The whole of config.yaml."""

    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    default_provider: str | None = None
    storage: StorageConfig = Field(default_factory=StorageConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    # MCP client timeouts (issue 8; the servers are in mcp_servers.yaml, not here)
    mcp: McpConfig = Field(default_factory=McpConfig)
    # Notify channel deliveries: timeout and retries (issue 7; channels live in the database).
    notify: NotifyConfig = Field(default_factory=NotifyConfig)
    # issue 6: limits of the HTTP tools, and the web_search back-end
    http_tools: HttpToolsConfig = Field(default_factory=HttpToolsConfig)
    web_search: WebSearchConfig = Field(default_factory=WebSearchConfig)

    #: Where the file was read from (not a key of the file).
    _source: str = PrivateAttr(default="")

    @property
    def source(self) -> str:
        """The file this configuration was read from ("" when built in code)."""
        return self._source

    def secret_refs(self) -> list[SecretRef]:
        """Every secret reference in the configuration."""
        refs = [p.api_key for p in self.providers.values() if p.api_key]
        if self.server.api_token:
            refs.append(self.server.api_token)
        if self.web_search.api_key:
            refs.append(self.web_search.api_key)
        return refs


def parse_config(text: str, filename: str) -> Config:
    """Validate config text; raise ConfigError naming file, key path and line."""
    try:
        config = load_model(Config, text, filename, keep_vars=is_secret_path)
    except FileProblemError as err:
        raise ConfigError(err.problems) from None
    located = parse_yaml(text, filename)
    attach_origins(config, filename, located)
    config._source = filename
    for ref in config.secret_refs():
        if ref.is_set():
            ref.resolve()  # registers the value with the log mask
    return config


def load_config(path: Path) -> Config:
    """Read and validate a config file; a missing file is an error telling how to create it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            [Problem(str(path), "", "file not found; run 'oryxos init' to create a workspace")]
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError([Problem(str(path), "", f"cannot read the file: {err}")]) from None
    return parse_config(text, str(path))
