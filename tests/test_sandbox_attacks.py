"""The table-driven attack suite: every case is refused, named and audited; the matching
allowed cases succeed. Calls go through the real executor, sandbox and SQLite audit table."""

from __future__ import annotations

import os
import shutil

import pytest

# (case id, probe, value template) — {root} is the test's temporary directory.
FILE_ATTACKS = [
    ("relative-traversal", "read", "../../../../../../etc/passwd"),
    ("absolute-outside", "read", "/etc/passwd"),
    ("double-slash", "read", "//etc/passwd"),
    ("sibling-prefix", "read", "{root}/data2/secret.txt"),
    ("dotdot-from-allowed", "read", "{root}/data/../secret/s.txt"),
    ("relative-dotdot-to-sibling", "read", "../data2/secret.txt"),
    ("proc-self-root", "read", "/proc/self/root{root}/secret/s.txt"),
    ("proc-self-root-etc", "read", "/proc/self/root/etc/passwd"),
    ("tilde-home", "read", "~/s.txt"),
    ("nul-byte", "read", "{root}/data/f.txt\x00.png"),
    ("empty-path", "read", ""),
    ("symlink-file-escape", "read", "{root}/data/link-to-secret"),
    ("symlink-dir-escape", "read", "linkdir/s.txt"),
    ("write-new-file-outside", "write", "{root}/secret/new.txt"),
    ("write-through-symlink-dir", "write", "linkdir/new/deeper.txt"),
    ("write-dangling-symlink", "write", "dangling"),
    ("write-config-yaml", "write", ".oryxos/config.yaml"),
    ("write-mcp-servers", "write", ".oryxos/mcp_servers.yaml"),
    ("read-database", "read", ".oryxos/oryxos.db"),
    ("write-skill-root", "write", "{root}/skill/SKILL.md"),
    ("move-state-dir", "write", ".oryxos"),
    ("move-project-dir", "write", "{root}/project"),
    ("write-database-wal", "write", ".oryxos/oryxos.db-wal"),
    ("write-own-agent-md", "write", ".oryxos/agents/default/AGENT.md"),
    ("write-new-agent-md", "write", ".oryxos/agents/newbie/AGENT.md"),
    ("move-agents-dir", "write", ".oryxos/agents"),
]
SHELL_ATTACKS = [
    ("not-listed", "rm -rf /"),
    ("semicolon", "ls; rm -rf x"),
    ("and-chain", "ls && rm x"),
    ("or-chain", "ls || rm x"),
    ("pipe-into-unlisted", "ls | sh"),
    ("background", "ls & rm x"),
    ("newline", "ls\nrm x"),
    ("dollar-substitution", "echo $(rm x)"),
    ("backticks", "echo `rm x`"),
    ("backticks-in-double-quotes", 'echo "`rm x`"'),
    ("process-substitution", "cat <(rm x)"),
    ("subshell", "(rm x)"),
    ("brace-group", "{ rm x; }"),
    ("parameter-expansion", "ls ${HOME}"),
    ("assignment-prefix", "PATH=/tmp ls"),
    ("redirect-outside", "echo hi > {root}/secret/out.txt"),
    ("redirect-append-config", "echo x >> .oryxos/config.yaml"),
    ("input-redirect-outside", "cat < {root}/secret/s.txt"),
    ("env-wrapper", "env rm x"),
    ("bash-c", "bash -c ls"),
    ("xargs", "ls | xargs rm"),
    ("absolute-unlisted", "/bin/rm x"),
    ("path-to-runner", "/usr/bin/env ls"),
    ("find-exec", "find . -exec rm x ;"),
    ("prefix-entry-other-subcommand", "git push"),
    ("here-document", "cat << EOF"),
    ("empty-line", "   "),
    ("glob-as-program", "l? -la"),
    ("tilde-program", "~/bin/ls"),
]
HTTP_ATTACKS = [
    ("other-host", "http://evil.com/"),
    ("suffix-confusion", "https://open.feishu.cn.evil.com/"),
    ("no-dot-confusion", "https://evilfeishu.cn/"),
    ("bare-wildcard-domain", "https://feishu.cn/"),
    ("userinfo", "http://api.example.com@evil.com/"),
    ("userinfo-password", "http://api.example.com:pw@evil.com/"),
    ("backslash", "http://evil.com\\@api.example.com/"),
    ("fragment-at", "http://evil.com#@api.example.com"),
    ("case-trailing-dot-other", "http://API.EXAMPLE.COM.evil.com./"),
    ("percent-encoded-host", "http://api%2eexample.com/"),
    ("metadata-ip", "http://169.254.169.254/latest/meta-data/"),
    ("metadata-hex", "http://0xa9fea9fe/"),
    ("metadata-decimal", "http://2852039166/"),
    ("metadata-mapped-v6", "http://[::ffff:169.254.169.254]/"),
    ("unlisted-ip", "http://10.1.2.4/"),
    ("idn-homograph", "https://\u0430pi.example.com/"),  # Cyrillic 'а'
    ("ftp-scheme", "ftp://api.example.com/"),
    ("file-scheme", "file:///etc/passwd"),
    ("no-host", "http:///path"),
]

#: The rule each refusal must name; cases not listed name their whitelist's main rule.
RULES = {
    **dict.fromkeys(
        [
            "write-config-yaml",
            "write-mcp-servers",
            "read-database",
            "redirect-append-config",
            "move-state-dir",
            "move-project-dir",
            "write-database-wal",
            "write-own-agent-md",
            "write-new-agent-md",
            "move-agents-dir",
        ],
        "sandbox.file.protected",
    ),
    **dict.fromkeys(["redirect-outside", "input-redirect-outside"], "sandbox.file.allowed_paths"),
    **dict.fromkeys(
        [
            "background",
            "dollar-substitution",
            "backticks",
            "backticks-in-double-quotes",
            "process-substitution",
            "subshell",
            "brace-group",
            "parameter-expansion",
            "assignment-prefix",
            "here-document",
            "empty-line",
            "glob-as-program",
            "tilde-program",
        ],
        "sandbox.shell.syntax",
    ),
    **dict.fromkeys(
        ["pipe-into-unlisted", "env-wrapper", "bash-c", "xargs", "path-to-runner", "find-exec"],
        "sandbox.shell.runners",
    ),
    **dict.fromkeys(
        [
            "userinfo",
            "userinfo-password",
            "backslash",
            "percent-encoded-host",
            "ftp-scheme",
            "file-scheme",
            "no-host",
        ],
        "sandbox.http.url",
    ),
    **dict.fromkeys(
        ["metadata-ip", "metadata-hex", "metadata-decimal", "metadata-mapped-v6"],
        "sandbox.http.allow_link_local",
    ),
}


def _prepare(sandboxed, monkeypatch):
    root = sandboxed.root
    os.symlink(root / "secret" / "s.txt", root / "data" / "link-to-secret")
    os.symlink(root / "secret", sandboxed.project / "linkdir")
    os.symlink(root / "secret" / "not-yet.txt", sandboxed.project / "dangling")
    monkeypatch.setenv("HOME", str(root / "secret"))
    monkeypatch.chdir(sandboxed.project)


def _assert_refused(sandboxed, case, tool, value, default_rule, **ctx):
    rule = RULES.get(case, default_rule)
    result = sandboxed.call(tool, value, case=case, **ctx)
    assert not result.success, f"{case}: {value!r} was allowed"
    assert not result.retryable, case
    assert result.error_message.startswith(f"refused by sandbox rule {rule}: "), (
        case,
        result.error_message,
    )
    rows = sandboxed.audit_rows(case)
    assert len(rows) == 1, case
    assert rows[0].success is False
    assert rows[0].error_message == result.error_message


def test_the_attack_suite_has_at_least_forty_cases():
    assert len(FILE_ATTACKS) + len(SHELL_ATTACKS) + len(HTTP_ATTACKS) >= 40


@pytest.mark.parametrize(("case", "tool", "value"), FILE_ATTACKS, ids=[c[0] for c in FILE_ATTACKS])
def test_file_attacks_are_refused_and_audited(sandboxed, monkeypatch, case, tool, value):
    _prepare(sandboxed, monkeypatch)
    value = value.replace("{root}", str(sandboxed.root))
    _assert_refused(
        sandboxed,
        case,
        tool,
        value,
        "sandbox.file.allowed_paths",
        extra_read_roots=(sandboxed.root / "skill",),
    )


@pytest.mark.parametrize(("case", "value"), SHELL_ATTACKS, ids=[c[0] for c in SHELL_ATTACKS])
def test_shell_attacks_are_refused_and_audited(sandboxed, monkeypatch, case, value):
    _prepare(sandboxed, monkeypatch)
    _assert_refused(
        sandboxed,
        case,
        "shell",
        value.replace("{root}", str(sandboxed.root)),
        "sandbox.shell.allowed_commands",
    )


@pytest.mark.parametrize(("case", "value"), HTTP_ATTACKS, ids=[c[0] for c in HTTP_ATTACKS])
def test_http_attacks_are_refused_and_audited(sandboxed, case, value):
    _assert_refused(sandboxed, case, "http", value, "sandbox.http.allowed_domains")


FILE_ALLOWED = [
    ("allowed-root-file", "read", "{root}/data/f.txt", "{root}/data/f.txt"),
    ("allowed-root-itself", "read", "{root}/data", "{root}/data"),
    ("project-relative", "read", "notes.txt", "{root}/project/notes.txt"),
    ("project-dotdot-inside", "read", "sub/../notes.txt", "{root}/project/notes.txt"),
    ("relative-to-allowed", "read", "../data/f.txt", "{root}/data/f.txt"),
    ("tilde-allowed", "read", "~/f.txt", "{root}/data/f.txt"),
    ("new-nested-file", "write", "{root}/data/new/deeper/x.txt", "{root}/data/new/deeper/x.txt"),
    ("skill-root-read", "read", "{root}/skill/SKILL.md", "{root}/skill/SKILL.md"),
    ("symlink-inside", "read", "{root}/data/link-inside", "{root}/data/f.txt"),
    ("agent-notes-write", "write", ".oryxos/agents/default/notes.md", None),
    ("agent-md-read", "read", ".oryxos/agents/default/AGENT.md", None),
]


@pytest.mark.parametrize(
    ("case", "tool", "value", "expected"), FILE_ALLOWED, ids=[c[0] for c in FILE_ALLOWED]
)
def test_matching_file_cases_are_allowed_with_the_real_path(
    sandboxed, monkeypatch, case, tool, value, expected
):
    root = sandboxed.root
    os.symlink(root / "data" / "f.txt", root / "data" / "link-inside")
    monkeypatch.setenv("HOME", str(root / "data"))
    result = sandboxed.call(
        tool, value.replace("{root}", str(root)), case=case, extra_read_roots=(root / "skill",)
    )
    assert result.success, result.error_message
    real_root = os.path.realpath(root)
    if expected:
        assert result.content == expected.format(root=real_root)
    rows = sandboxed.audit_rows(case)
    assert len(rows) == 1 and rows[0].success is True
    assert rows[0].input == {
        "value": value.replace("{root}", str(root))
    }  # what was asked, not rewritten


SHELL_ALLOWED_CASES = [
    ("single", "ls -la"),
    ("chain", "echo a && echo b || echo c; true"),
    ("pipe", "echo a | grep a"),
    ("quoted-metacharacters", "echo 'a;b|c$(d)`e`' \"x && y\""),
    ("redirect-inside", "echo hi > {root}/data/out.txt 2>/dev/null"),
    ("absolute-same-file", "/bin/ls"),
    ("prefix-entry", "git status --short"),
    ("find-without-exec", "find . -name '*.txt'"),
    ("comment", "ls # ; rm -rf /"),
]


@pytest.mark.parametrize(
    ("case", "value"), SHELL_ALLOWED_CASES, ids=[c[0] for c in SHELL_ALLOWED_CASES]
)
def test_matching_shell_cases_are_allowed(sandboxed, case, value):
    if case == "absolute-same-file" and os.path.realpath("/bin/ls") != os.path.realpath(
        shutil.which("ls")
    ):
        pytest.fail("this machine's /bin/ls is not the ls on PATH; adjust the case")
    result = sandboxed.call("shell", value.replace("{root}", str(sandboxed.root)), case=case)
    assert result.success, result.error_message
    assert [r.success for r in sandboxed.audit_rows(case)] == [True]


HTTP_ALLOWED_CASES = [
    (
        "wildcard-subdomain",
        "https://open.feishu.cn/open-apis/x",
        "https://open.feishu.cn/open-apis/x",
    ),
    ("wildcard-deep", "https://a.b.feishu.cn/", "https://a.b.feishu.cn/"),
    ("case-and-trailing-dot", "HTTPS://OPEN.FEISHU.CN./x", "https://open.feishu.cn/x"),
    ("exact-with-port", "http://api.example.com:8443/v1?q=1", "http://api.example.com:8443/v1?q=1"),
    ("idn", "https://BÜCHER.example/", "https://xn--bcher-kva.example/"),
    ("listed-ip", "http://10.1.2.3/", "http://10.1.2.3/"),
    ("listed-ip-other-spelling", "http://10.1.515/", "http://10.1.2.3/"),
]


@pytest.mark.parametrize(
    ("case", "value", "normal"), HTTP_ALLOWED_CASES, ids=[c[0] for c in HTTP_ALLOWED_CASES]
)
def test_matching_http_cases_are_allowed_and_normalised(sandboxed, case, value, normal):
    result = sandboxed.call("http", value, case=case)
    assert result.success, result.error_message
    assert result.content == normal
    assert [r.success for r in sandboxed.audit_rows(case)] == [True]
