"""Units of the sandbox: host normalisation, wildcard matching, addresses, the shell grammar."""

from __future__ import annotations

import pytest

from oryxos.config import Config
from oryxos.sandbox import SandboxChecker, SandboxViolation, host_matches, normalise_host
from oryxos.shell_syntax import ShellSyntaxError, parse
from oryxos.workspace import Workspace


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("Open.Feishu.CN.", ("open.feishu.cn", False)),
        ("bücher.example", ("xn--bcher-kva.example", False)),
        ("127.1", ("127.0.0.1", True)),
        ("0x7f000001", ("127.0.0.1", True)),
        ("017700000001", ("127.0.0.1", True)),
        ("[::1]", ("::1", True)),
        ("1e100.net", ("1e100.net", False)),
        ("_dmarc.Example.com", ("_dmarc.example.com", False)),
        ("xn--bcher-kva.example", ("xn--bcher-kva.example", False)),
        ("faß.de", ("xn--fa-hia.de", False)),  # IDNA 2008: ß is kept, not mapped to "ss"
    ],
)
def test_normalise_host(host, expected):
    assert normalise_host(host) == expected


@pytest.mark.parametrize(
    "host",
    ["", ".", "a..b", "a%2eb", "u@h", "h:80", "999.1.1.1", "a b", "-x.com", "x/y", "é_\u00e0.com"],
)
def test_normalise_host_refuses_non_hosts(host):
    with pytest.raises(ValueError):
        normalise_host(host)


@pytest.mark.parametrize(
    ("host", "pattern", "expected"),
    [
        ("open.feishu.cn", "*.feishu.cn", True),
        ("a.b.feishu.cn", "*.feishu.cn", True),
        ("feishu.cn", "*.feishu.cn", False),
        ("evilfeishu.cn", "*.feishu.cn", False),
        ("feishu.cn.evil.com", "*.feishu.cn", False),
        (".feishu.cn", "*.feishu.cn", False),
        ("api.example.com", "api.example.com", True),
        ("x.api.example.com", "api.example.com", False),
    ],
)
def test_wildcards(host, pattern, expected):
    assert host_matches(host, False, pattern) is expected


def _checker(tmp_path, **http):
    config = Config.model_validate({"sandbox": {"http": http}})
    return SandboxChecker(config, Workspace(tmp_path / ".oryxos"))


@pytest.mark.parametrize(
    "address",
    ["169.254.169.254", "169.254.0.1", "fe80::1", "fd00:ec2::254", "100.100.100.200",
     "::ffff:169.254.169.254", "[fe80::1%eth0]"],
)  # fmt: skip
def test_check_address_refuses_link_local_and_metadata(tmp_path, address):
    with pytest.raises(SandboxViolation, match=r"sandbox\.http\.allow_link_local"):
        _checker(tmp_path).check_address(address)
    assert _checker(tmp_path, allow_link_local=True).check_address(address)


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.1", "2001:db8::1", "100.100.100.201"])
def test_check_address_allows_other_addresses(tmp_path, address):
    assert str(_checker(tmp_path).check_address(address)) == address


def test_an_empty_whitelist_denies_everything(tmp_path):
    checker = _checker(tmp_path)
    with pytest.raises(SandboxViolation, match="the HTTP whitelist is empty"):
        checker.check_url("https://example.com/")
    with pytest.raises(SandboxViolation, match="the shell whitelist is empty"):
        checker.check_command("ls")


def test_the_plan_keeps_operators_pipes_and_redirections():
    plan = parse("cat a 'b c' | grep -v x 2>&1 >> out; ls\n\nfalse || echo no && echo yes")
    assert [(step.op, [c.argv for c in step.pipeline]) for step in plan.steps] == [
        ("", [["cat", "a", "b c"], ["grep", "-v", "x"]]),
        (";", [["ls"]]),
        (";", [["false"]]),
        ("||", [["echo", "no"]]),
        ("&&", [["echo", "yes"]]),
    ]
    grep = plan.steps[0].pipeline[1]
    assert [(r.fd, r.mode, r.target, r.dup_of) for r in grep.redirects] == [
        (2, "dup", "", 1),
        (1, "a", "out", None),
    ]


def test_words_keep_quoting_information():
    (command,) = parse("ls *.py '*.md' ~/x '~/y' a\\ b \"q\\\"uote\"").commands()
    assert command.argv == ["ls", "*.py", "*.md", "~/x", "~/y", "a b", 'q"uote']
    assert [w.glob for w in command.words] == [False, True, False, False, False, False, False]
    assert [w.tilde for w in command.words] == [False, False, False, True, False, False, False]


@pytest.mark.parametrize(
    "line",
    ["ls |", "| ls", "&& ls", "ls ;;", "echo 'open", 'echo "open', "echo x\\", "> out",
     "ls > ", "echo $x", "echo ${x}", "ls !", "a=b", "cat *.txt > *.out", "ls\x00"],
)  # fmt: skip
def test_malformed_or_unsupported_lines_are_errors(line):
    with pytest.raises(ShellSyntaxError):
        parse(line)


def test_assignment_like_arguments_are_fine():
    (command,) = parse("ls --color=auto a=b").commands()
    assert command.argv == ["ls", "--color=auto", "a=b"]


def test_config_entries_that_could_never_match_are_errors_with_file_and_line():
    from oryxos.config import parse_config
    from oryxos.errors import ConfigError

    text = (
        "sandbox:\n"
        "  http:\n"
        "    allowed_domains: [ok.com, 'http://x.com/']\n"
        "  shell:\n"
        "    allowed_commands: [ls, /usr/bin/env]\n"
    )
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "c.yaml")
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("c.yaml:3: sandbox.http.allowed_domains: ")
    assert "'http://x.com/' is not a host or *.domain entry" in lines[0]
    assert lines[1].startswith("c.yaml:5: sandbox.shell.allowed_commands: ")
    assert "'/usr/bin/env' runs other programs" in lines[1]


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("ls a \\\n", ["ls", "a"]),  # a trailing continuation is no empty argument
        ("ls \\\n#comment", ["ls"]),  # nor does it hide a comment
        ("ls a\\\nb", ["ls", "ab"]),
        ("ls '' \"\"", ["ls", "", ""]),  # empty quotes are arguments
    ],
)
def test_line_continuations_and_empty_words(line, argv):
    (command,) = parse(line).commands()
    assert command.argv == argv
