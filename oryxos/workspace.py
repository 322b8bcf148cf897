"""Locating and describing the workspace: the ``.oryxos/`` directory of a project.

The workspace is ``.oryxos/`` in the current directory, or the one named by ``--workspace`` /
``ORYXOS_WORKSPACE``. Either may name the project directory that holds ``.oryxos/`` or the
``.oryxos/`` directory itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from oryxos.errors import WorkspaceError

STATE_DIRNAME = ".oryxos"
ENV_WORKSPACE = "ORYXOS_WORKSPACE"


@dataclass(frozen=True)
class Workspace:
    """Paths of one workspace. Cheap to build; touches the disk only when asked."""

    path: Path  # the .oryxos directory

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    @property
    def project_dir(self) -> Path:
        """The directory that holds ``.oryxos/``; relative paths in config are relative to it."""
        return self.path.parent

    @property
    def config_file(self) -> Path:
        return self.path / "config.yaml"

    @property
    def agents_dir(self) -> Path:
        return self.path / "agents"

    @property
    def skills_dir(self) -> Path:
        return self.path / "skills"

    @property
    def memory_dir(self) -> Path:
        return self.path / "memory"

    @property
    def logs_dir(self) -> Path:
        return self.path / "logs"

    @property
    def mcp_servers_file(self) -> Path:
        return self.path / "mcp_servers.yaml"

    def exists(self) -> bool:
        return self.path.is_dir()

    def resolve(self, value: str | os.PathLike[str]) -> Path:
        """A path from config: ``~`` expanded, relative ones taken from the project directory."""
        path = Path(os.path.expanduser(os.fspath(value)))
        return path if path.is_absolute() else self.project_dir / path

    def disabled_plugins(self) -> list[str]:
        """``plugins.disabled`` of config.yaml, read without failing (for CLI start-up).

        The plugin list must be known before click parses the command line (plugins add
        commands), and a broken config must not stop ``oryxos status`` from reporting it; so
        this reads the raw YAML — no pydantic on the start-up path — and gives up quietly. The
        command that loads the config reports any problem.
        """
        import yaml

        try:
            data = yaml.safe_load(self.config_file.read_text(encoding="utf-8"))
            disabled = data["plugins"]["disabled"]
        except Exception:
            return []
        if isinstance(disabled, list):
            return [str(name) for name in disabled]
        return []

    def require(self) -> Workspace:
        """This workspace, or a WorkspaceError that says how to create one."""
        if not self.exists():
            raise WorkspaceError(
                f"no OryxOS workspace at {self.path}; run 'oryxos init' there, "
                f"or point --workspace / {ENV_WORKSPACE} at an existing one"
            )
        return self


def locate(option: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Workspace:
    """The workspace named by ``--workspace``, else ``ORYXOS_WORKSPACE``, else ``./.oryxos``."""
    chosen = option if option not in (None, "") else os.environ.get(ENV_WORKSPACE) or None
    base = Path(cwd or Path.cwd())
    if chosen is None:
        return Workspace((base / STATE_DIRNAME).absolute())
    path = Path(os.path.expanduser(os.fspath(chosen)))
    if not path.is_absolute():
        path = base / path
    path = Path(os.path.abspath(path))
    if path.name == STATE_DIRNAME or (path / "config.yaml").is_file():
        return Workspace(path)
    return Workspace(path / STATE_DIRNAME)
