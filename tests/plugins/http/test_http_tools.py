"""http_get / http_post / http_request / fetch_webpage / download_file against a local server."""

from __future__ import annotations

import json
import socket

import pytest
from http_fakes import ARTICLE_TEXT, BIG_BYTES

from oryxos.storage import AuditQuery


def body_of(result):
    assert result.success, result.error_message
    return result.content.split("\n\n", 1)[1]


def test_http_tools_are_registered(env):
    names = env.runtime.catalog.groups()["http"]
    assert names == [
        "download_file",
        "fetch_webpage",
        "http_get",
        "http_post",
        "http_request",
        "web_search",
    ]


def test_get_returns_status_headers_and_body(env, web):
    result = env.run("http_get", url=f"{web.base}/json")
    assert result.content.startswith("HTTP 200 OK\ncontent-type: application/json\n\n")
    assert json.loads(body_of(result)) == {"items": [1, 2, 3]}


def test_non_2xx_is_content_not_an_error(env, web):
    result = env.run("http_get", url=f"{web.base}/missing")
    assert result.success
    assert result.content.startswith("HTTP 404 Not Found\n")
    assert result.content.endswith("no such thing")
    teapot = env.run("http_request", method="DELETE", url=f"{web.base}/teapot")
    assert teapot.success and teapot.content.startswith("HTTP 418")


def test_post_json_and_text_bodies(env, web):
    result = env.run("http_post", url=f"{web.base}/echo", json={"a": [1, "é"]})
    echoed = json.loads(body_of(result))
    assert echoed["method"] == "POST"
    assert json.loads(echoed["body"]) == {"a": [1, "é"]}
    assert echoed["headers"]["content-type"] == "application/json"
    result = env.run(
        "http_post", url=f"{web.base}/echo", body="a=1", headers={"Content-Type": "text/plain"}
    )
    echoed = json.loads(body_of(result))
    assert echoed["body"] == "a=1" and echoed["headers"]["content-type"] == "text/plain"


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def test_http_request_methods_and_headers(env, web, method):
    result = env.run(
        "http_request",
        method=method,
        url=f"{web.base}/echo",
        headers={"X-Trace": "t-1"},
        **({} if method == "GET" else {"body": "payload"}),
    )
    echoed = json.loads(body_of(result))
    assert echoed["method"] == method
    assert echoed["headers"]["x-trace"] == "t-1"
    assert echoed["headers"]["user-agent"].startswith("OryxOS")
    assert echoed["body"] == ("" if method == "GET" else "payload")


def test_body_and_json_together_is_retryable(env, web):
    result = env.run("http_post", url=f"{web.base}/echo", body="x", json={"a": 1})
    assert not result.success and result.retryable
    assert "either body or json" in result.error_message


def test_host_header_may_not_be_set(env, web):
    result = env.run("http_get", url=f"{web.base}/json", headers={"Host": "internal"})
    assert not result.success and "'Host' may not be set" in result.error_message


def test_include_headers_shows_every_header(env, web):
    result = env.run("http_get", url=f"{web.base}/json", include_headers=True)
    assert "\ncontent-length: 20\n" in result.content


def test_non_whitelisted_host_is_refused_before_any_request(env, web):
    before = len(web.requests)
    port = web.server_address[1]
    result = env.run("http_get", url=f"http://localhost:{port}/json")
    assert not result.success and not result.retryable
    assert "sandbox rule sandbox.http.allowed_domains" in result.error_message
    assert len(web.requests) == before


def test_redirect_within_the_whitelist_is_followed(env, web):
    result = env.run("http_get", url=f"{web.base}/redirect-chain?n=3")
    assert result.content.startswith("HTTP 200 OK\nFinal URL (after 3 redirects): ")
    assert json.loads(body_of(result).split("\n", 0)[0]) == {"items": [1, 2, 3]}


def test_redirect_to_a_non_whitelisted_host_is_refused_at_the_hop(env, web):
    before = len(web.requests)
    result = env.run("http_get", url=f"{web.base}/redirect-away")
    assert not result.success and not result.retryable
    assert "sandbox.http.allowed_domains" in result.error_message
    assert "'localhost'" in result.error_message
    # the first hop was made, the refused one never was
    assert [r[1] for r in web.requests[before:]] == ["/redirect-away"]


def test_redirect_to_the_metadata_address_is_refused(make_env, web):
    env = make_env(sandbox={"http": {"allowed_domains": ["127.0.0.1", "169.254.169.254"]}})
    result = env.run("fetch_webpage", url=f"{web.base}/redirect-metadata")
    assert not result.success
    assert "sandbox.http.allow_link_local" in result.error_message


def test_a_whitelisted_name_resolving_to_link_local_is_refused(make_env, web, monkeypatch):
    """DNS answers are checked: metadata.test is whitelisted but resolves to 169.254.169.254."""
    real = socket.getaddrinfo
    answers = {"metadata.test": "169.254.169.254", "local.test": "127.0.0.1"}

    def fake_getaddrinfo(host, port, *args, **kwargs):
        if host in answers:
            return real(answers[host], port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    env = make_env(sandbox={"http": {"allowed_domains": ["metadata.test", "local.test"]}})
    refused = env.run("http_get", url="http://metadata.test/latest/meta-data/")
    assert not refused.success
    assert "sandbox rule sandbox.http.allow_link_local" in refused.error_message
    assert "169.254.169.254" in refused.error_message
    allowed = env.run("http_get", url=f"http://local.test:{web.server_address[1]}/json")
    assert allowed.success and allowed.content.startswith("HTTP 200")


def test_a_resolver_that_does_not_answer_is_given_up_on(make_env, web, monkeypatch):
    """The system resolver can hang for ~30 s; the request timeout covers the look-up too."""
    import threading
    import time

    real = socket.getaddrinfo
    release = threading.Event()

    def hanging_getaddrinfo(host, port, *args, **kwargs):
        if host == "slow-dns.test":
            release.wait(10)  # a resolver waiting for name servers that do not answer
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        if host == "gone.test":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hanging_getaddrinfo)
    env = make_env(
        sandbox={"http": {"allowed_domains": ["slow-dns.test", "gone.test"]}},
        http_tools={"timeout_seconds": 0.5},
    )
    began = time.monotonic()
    result = env.run("http_get", url="http://slow-dns.test/x")
    release.set()
    assert time.monotonic() - began < 3
    assert not result.success and result.retryable
    assert result.error_message == (
        "cannot resolve host 'slow-dns.test': no answer from the DNS resolver within 0.5 s"
    )
    unknown = env.run("http_get", url="http://gone.test/")
    assert not unknown.success and unknown.retryable
    assert (
        unknown.error_message
        == "cannot resolve host 'gone.test': [Errno -2] Name or service not known"
    )


def test_too_many_redirects(env, web):
    result = env.run("http_get", url=f"{web.base}/redirect-loop")
    assert not result.success and "more than 5 redirects" in result.error_message


def test_303_turns_a_post_into_a_get_and_307_keeps_it(env, web):
    echoed = json.loads(body_of(env.run("http_post", url=f"{web.base}/see-other", body="b")))
    assert echoed["method"] == "GET" and echoed["body"] == ""
    echoed = json.loads(body_of(env.run("http_post", url=f"{web.base}/redirect-307", body="b")))
    assert echoed["method"] == "POST" and echoed["body"] == "b"


def test_timeout_is_a_retryable_error(make_env, web):
    env = make_env(http_tools={"timeout_seconds": 0.3})
    result = env.run("http_get", url=f"{web.base}/slow?s=1.5")
    assert not result.success and result.retryable
    assert "timed out after 0.3 s" in result.error_message


def test_response_body_is_cut_at_the_cap(make_env, web):
    env = make_env(http_tools={"max_response_bytes": 1000})
    streams = len(web.big_sent)
    result = env.run("http_get", url=f"{web.base}/big")
    assert result.success
    assert "[body cut at 1000 bytes (http_tools.max_response_bytes)]" in result.content
    assert web.wait_big_sent(streams + 1) < BIG_BYTES


def test_charset_and_binary_bodies(env, web):
    assert body_of(env.run("http_get", url=f"{web.base}/latin1")) == "café"
    binary = body_of(env.run("http_get", url=f"{web.base}/binary"))
    assert binary.startswith("[binary body: 1032 bytes of image/png")


def test_non_http_scheme_is_refused(env):
    result = env.run("http_get", url="file:///etc/passwd")
    assert not result.success and "only http and https" in result.error_message


def test_every_call_is_audited(env, web):
    env.run("http_get", url=f"{web.base}/json")
    env.run("http_get", url=f"{web.base}/redirect-away")
    rows = env.runtime.storage.audit.tool_invocations(AuditQuery(session_id="http-test")).items
    assert sorted(r.success for r in rows) == [False, True]


# fetch_webpage -------------------------------------------------------------------------------


def test_fetch_webpage_yields_the_article_without_boilerplate(env, web):
    result = env.run("fetch_webpage", url=f"{web.base}/article")
    assert result.success, result.error_message
    text = result.content
    assert text.startswith("Title: The Oryx of Arabia\n")
    assert ARTICLE_TEXT in text.replace("\n", " ")
    assert "## Habitat" in text  # Markdown structure kept
    for boilerplate in ("Log in", "cookies", "Celebrity gossip", "newsletter", "Copyright"):
        assert boilerplate not in text, boilerplate


def test_fetch_webpage_as_plain_text(env, web):
    text = env.run("fetch_webpage", url=f"{web.base}/article", format="text").content
    assert "##" not in text and "Habitat" in text and "Celebrity gossip" not in text


def test_fetch_webpage_of_json_returns_it_as_text(env, web):
    result = env.run("fetch_webpage", url=f"{web.base}/json")
    assert result.success and result.content.endswith('{"items": [1, 2, 3]}')


def test_fetch_webpage_of_binary_says_use_download(env, web):
    result = env.run("fetch_webpage", url=f"{web.base}/binary")
    assert not result.success and "use download_file" in result.error_message


# download_file -------------------------------------------------------------------------------


def test_download_saves_the_file_atomically(env, web):
    target = env.downloads / "hello.txt"
    result = env.run("download_file", url=f"{web.base}/small-file", path=str(target))
    assert result.success, result.error_message
    assert target.read_bytes() == b"hello download\n"
    assert "Saved 15 bytes" in result.content and "sha256 " in result.content
    assert sorted(p.name for p in env.downloads.iterdir()) == ["hello.txt"]
    again = env.run("download_file", url=f"{web.base}/small-file", path=str(target))
    assert not again.success and again.retryable and "overwrite=true" in again.error_message
    assert env.run(
        "download_file", url=f"{web.base}/small-file", path=str(target), overwrite=True
    ).success


def test_download_outside_the_file_whitelist_is_refused(env, web, tmp_path):
    before = len(web.requests)
    result = env.run("download_file", url=f"{web.base}/small-file", path=str(tmp_path / "x.txt"))
    assert not result.success and "sandbox rule sandbox.file" in result.error_message
    assert not (tmp_path / "x.txt").exists()
    assert len(web.requests) == before


def test_a_50_mb_download_is_cut_at_the_cap(env, web):
    """Default cap 25 MiB; the server streams 50 MB chunked: reading stops, nothing is kept."""
    target = env.downloads / "big.bin"
    streams = len(web.big_sent)
    result = env.run("download_file", url=f"{web.base}/big", path=str(target))
    assert not result.success and not result.retryable
    assert "larger than the download cap of 26214400 bytes" in result.error_message
    assert not target.exists()
    assert list(env.downloads.iterdir()) == []  # no partial or temporary file left
    assert web.wait_big_sent(streams + 1) < BIG_BYTES  # the client hung up before the end


def test_a_declared_oversized_download_is_refused_before_reading(env, web):
    target = env.downloads / "big.bin"
    result = env.run("download_file", url=f"{web.base}/big?declare=1", path=str(target))
    assert not result.success and "52428800 bytes declared" in result.error_message
    assert list(env.downloads.iterdir()) == []


def test_download_of_an_error_page_saves_nothing(env, web):
    target = env.downloads / "missing.txt"
    result = env.run("download_file", url=f"{web.base}/missing", path=str(target))
    assert not result.success and "HTTP 404 Not Found" in result.error_message
    assert list(env.downloads.iterdir()) == []


def test_the_connection_goes_to_the_checked_address_not_a_later_dns_answer(
    make_env, web, monkeypatch
):
    """DNS rebinding: the name resolves to an allowed address when checked and to another one
    a moment later. The request must still go to the checked address, with the name in Host."""
    real = socket.getaddrinfo
    answers = iter(["127.0.0.1"])  # first answer: the test server; any later one: nothing there

    def rebinding_getaddrinfo(host, port, *args, **kwargs):
        if host == "rebind.test":
            return real(next(answers, "127.0.0.2"), port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_getaddrinfo)
    env = make_env(sandbox={"http": {"allowed_domains": ["rebind.test"]}})
    port = web.server_address[1]
    result = env.run("http_get", url=f"http://rebind.test:{port}/echo")
    assert result.success, result.error_message
    echoed = json.loads(body_of(result))
    assert echoed["headers"]["host"] == f"rebind.test:{port}"
