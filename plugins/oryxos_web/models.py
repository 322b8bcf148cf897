"""Request and response models of the API: validation and the OpenAPI document share them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    """Request models: an unknown field is an error, not silence."""

    model_config = ConfigDict(extra="forbid")


NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


# Health and info ---------------------------------------------------------------------------


class Health(BaseModel):
    """Liveness and the database check."""

    status: Literal["ok"]
    database: Literal["ok"]
    schema_version: int


class PluginOut(BaseModel):
    name: str
    distribution: str | None = None
    version: str | None = None


class ProviderOut(BaseModel):
    """A configured provider: ``configured`` says whether its key variable is set (no key)."""

    name: str
    model: str
    configured: bool
    default: bool
    key_variables: list[str] = Field(default_factory=list)


class StatusSectionOut(BaseModel):
    """A plugin's part of the status (the ``oryxos_status`` hook), e.g. the MCP servers."""

    name: str
    summary: str
    ok: bool
    items: list[dict[str, Any]] = Field(default_factory=list)


class Info(BaseModel):
    version: str
    workspace: str
    plugins: list[PluginOut]
    broken_plugins: list[str]
    providers: list[ProviderOut]
    auth: bool
    status: list[StatusSectionOut] = Field(default_factory=list)


# Sandbox whitelist --------------------------------------------------------------------------


class WhitelistIn(Strict):
    kind: Literal["file", "shell", "http"]
    value: str = Field(min_length=1, max_length=2048)
    note: str | None = Field(default=None, max_length=500)


class WhitelistQuery(Strict):
    kind: Literal["file", "shell", "http"] | None = None


class WhitelistDeleteQuery(Strict):
    kind: Literal["file", "shell", "http"]
    value: str = Field(min_length=1, max_length=2048)


class WhitelistEntryOut(BaseModel):
    id: int | None = None
    kind: str
    value: str
    note: str | None = None
    created_at: datetime


class WhitelistConfig(BaseModel):
    """Entries from config.yaml (read-only here)."""

    file: list[str]
    shell: list[str]
    http: list[str]


class WhitelistList(BaseModel):
    items: list[WhitelistEntryOut]
    config: WhitelistConfig


# Audit -----------------------------------------------------------------------------------


class AuditFilter(Strict):
    session_id: str | None = Field(default=None, max_length=200)
    agent: str | None = Field(default=None, max_length=200)
    success: bool | None = None
    since: datetime | None = Field(default=None, description="ISO 8601, inclusive")
    until: datetime | None = Field(default=None, description="ISO 8601, exclusive")
    limit: int = Field(default=50, ge=1, le=500)
    offset: int = Field(default=0, ge=0)


class ToolAuditFilter(AuditFilter):
    tool: str | None = Field(default=None, max_length=200)


class LlmAuditFilter(AuditFilter):
    provider: str | None = Field(default=None, max_length=200)


class ToolInvocationOut(BaseModel):
    id: int | None = None
    tool_name: str
    input: dict[str, Any]
    success: bool
    result: str | None = None
    error_message: str | None = None
    duration_ms: int
    session_id: str | None = None
    agent: str | None = None
    channel: str | None = None
    created_at: datetime


class LlmCallOut(BaseModel):
    id: int | None = None
    provider: str
    model: str
    success: bool
    duration_ms: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    error_message: str | None = None
    session_id: str | None = None
    agent: str | None = None
    attempt: int
    created_at: datetime


class ToolInvocationPage(BaseModel):
    items: list[ToolInvocationOut]
    total: int
    limit: int
    offset: int


class LlmCallPage(BaseModel):
    items: list[LlmCallOut]
    total: int
    limit: int
    offset: int


# Notify channels ----------------------------------------------------------------------------


class NotifyChannelIn(Strict):
    name: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$",
        description="a slug: lower-case letters, digits, '-' and '_' (e.g. team-lark)",
    )
    type: str = Field(min_length=1, max_length=64, description="a registered adapter type")
    url: str = Field(pattern=r"^https?://\S+$", max_length=2048)
    secret: str | None = Field(
        default=None,
        max_length=2048,
        description="write-only: ${VAR} (read from the environment when sending) or the value",
    )
    description: str | None = Field(default=None, max_length=500)


class NotifyChannelUpdate(Strict):
    type: str | None = Field(default=None, min_length=1, max_length=64)
    url: str | None = Field(default=None, pattern=r"^https?://\S+$", max_length=2048)
    secret: str | None = Field(default=None, max_length=2048)
    description: str | None = Field(default=None, max_length=500)


class NotifyChannelOut(BaseModel):
    """A notify channel; its secret is never shown, ``has_secret`` tells whether one is set."""

    name: str
    type: str
    url: str
    description: str | None = None
    has_secret: bool
    secret_variable: str | None = Field(
        default=None, description="the ${VAR} the secret is read from, if it is a reference"
    )
    created_at: datetime
    updated_at: datetime


class NotifyChannelList(BaseModel):
    items: list[NotifyChannelOut]
    types: list[str]


class NotifyTestIn(Strict):
    content: str = Field(default="OryxOS test message", min_length=1, max_length=4000)


class NotifyTestOut(BaseModel):
    channel: str
    delivered: bool
    detail: str | None = None


# Sessions and turns ---------------------------------------------------------------------------


class CreateSession(Strict):
    agent: str = Field(default="default", pattern=NAME)
    user: str = Field(default="api", pattern=r"^[A-Za-z0-9_.@-]{1,64}$")
    channel: str = Field(default="rest", pattern=r"^[A-Za-z0-9_.-]{1,32}$")


class SessionQuery(Strict):
    agent: str | None = Field(default=None, max_length=200)
    status: Literal["active", "archived"] | None = None
    limit: int = Field(default=50, ge=1, le=500)
    offset: int = Field(default=0, ge=0)


class SessionSummary(BaseModel):
    session_id: str
    agent: str
    channel: str
    user: str
    status: str
    created_at: datetime
    last_active_at: datetime
    archived_at: datetime | None = None
    message_count: int


class SessionOut(SessionSummary):
    """A session with its history (OpenAI chat-format messages)."""

    messages: list[dict[str, Any]]


class SessionPage(BaseModel):
    items: list[SessionSummary]
    total: int
    limit: int
    offset: int


class MessageIn(Strict):
    message: str = Field(min_length=1, max_length=100_000)


class ToolCallOut(BaseModel):
    name: str
    arguments: dict[str, Any]
    success: bool
    result: str | None = None
    error_message: str | None = None


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class TurnOut(BaseModel):
    """What one turn produced: the answer, the tool calls made and the token usage."""

    session_id: str | None = Field(default=None, description="null for a one-shot invoke")
    agent: str
    answer: str
    success: bool = Field(description="false when the turn hit max_iterations or a tool failed")
    error: str | None = None
    tool_calls: list[ToolCallOut]
    usage: Usage


# Profiles, tools, memory ---------------------------------------------------------------------


class SkillOut(BaseModel):
    name: str
    state: str
    detail: str | None = None


class ProfileSummary(BaseModel):
    name: str
    description: str | None = None
    provider: str | None = None
    model: str | None = None


class ProfileDetail(ProfileSummary):
    agent_name: str | None = None
    tools: list[str]
    mcp_servers: list[str]
    channels: list[str]
    skills: list[SkillOut]
    settings: dict[str, Any]
    instructions: str


class ProfileList(BaseModel):
    items: list[ProfileSummary]
    problems: list[str]


class ToolOut(BaseModel):
    name: str
    description: str
    groups: list[str]
    plugin: str
    available: bool
    reason: str | None = None


class ToolQuery(Strict):
    agent: str | None = Field(default=None, pattern=NAME, description="only this agent's tools")


class ToolList(BaseModel):
    items: list[ToolOut]
    unknown: list[str] = Field(default_factory=list, description="names the agent wants")


class MemoryEntryOut(BaseModel):
    saved_at: str
    text: str


class MemoryOut(BaseModel):
    backend: str | None
    entries: list[MemoryEntryOut]
