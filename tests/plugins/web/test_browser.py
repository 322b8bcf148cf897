"""The console in a real headless Chromium (Debian's package, driven by Playwright).

Needs /usr/bin/chromium: `.ci/setup-browser.sh` installs it. Without it the test FAILS with
that instruction instead of being skipped: a skip must not count as a pass.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from oryxos.storage import ToolInvocationRecord
from oryxos.testing import Reply, use_model_server

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN = "console-token-1234"


@pytest.fixture
def live_server(make_runtime, monkeypatch, oryxos_workspace, oryxos_model_server):
    """A real waitress server on 127.0.0.1 with a token, serving the console; the default
    agent's provider is the scripted model server."""
    from oryxos_web import create_app
    from oryxos_web.server import Server

    monkeypatch.setenv("CONSOLE_TEST_TOKEN", TOKEN)
    oryxos_workspace.config_file.write_text("server:\n  api_token: ${CONSOLE_TEST_TOKEN}\n")
    use_model_server(oryxos_workspace, oryxos_model_server, max_retries=0)
    runtime = make_runtime()
    server = Server(create_app(runtime), host="127.0.0.1", port=0, threads=4, deadline=5)
    thread = threading.Thread(target=server.serve, kwargs={"install_signals": False})
    thread.start()
    yield server, runtime
    server.stop()
    thread.join(10)


@pytest.fixture
def page():
    assert CHROMIUM.exists(), "headless Chromium missing: run .ci/setup-browser.sh"
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        context = browser.new_context()
        # nothing may leave the machine: any request not to 127.0.0.1 fails the test
        outside = []
        context.on(
            "request",
            lambda r: None if r.url.startswith("http://127.0.0.1:") else outside.append(r.url),
        )
        yield context.new_page()
        browser.close()
        assert outside == []


def _login(page, url):
    page.goto(url + "/sessions")
    assert "/login" in page.url
    page.fill("input[name=token]", "wrong")
    page.click("button[type=submit]")
    assert page.locator(".flash.error").inner_text() == "wrong token"
    page.fill("input[name=token]", TOKEN)
    page.click("button[type=submit]")
    page.wait_for_url(url + "/sessions")  # back where the login started
    page.click("text=Dashboard")
    assert page.locator("#health").inner_text() == "ok"


def test_login_notify_channel_chat_and_audit(live_server, page, recorder, oryxos_model_server):
    server, runtime = live_server
    url = server.url
    runtime.storage.audit.record_tool_invocation(
        ToolInvocationRecord(
            tool_name="run_shell",
            input={"command": "rm -rf /"},
            success=False,
            error_message="refused: shell whitelist has no 'rm'",
            agent="default",
        )
    )
    _login(page, url)

    page.click("text=Notify")
    page.fill("#new-channel input[name=name]", "ops")
    page.select_option("#new-channel select[name=type]", "recorder")
    page.fill("#new-channel input[name=url]", "https://hooks.example.com/in")
    page.fill("#new-channel input[name=secret]", "not-shown-1234")
    page.click("#new-channel button[type=submit]")
    assert "channel ops created" in page.locator(".flash.ok").inner_text()
    assert page.locator("#channel-ops").is_visible()
    assert "not-shown-1234" not in page.content()
    page.click("#channel-ops >> text=Send test")
    assert "delivered to ops" in page.locator(".flash.ok").inner_text()
    assert recorder.sent == [("ops", "OryxOS console test message")]
    assert runtime.storage.notify_channels.get("ops").url == "https://hooks.example.com/in"

    oryxos_model_server.script(
        Reply.tool("current_time", {}),
        Reply.answer("It is tea time.").after(2.0),
        Reply.answer("Bye."),
    )
    page.click("nav >> text=Chat")
    page.select_option("select[name=agent]", "default")
    page.fill("textarea[name=message]", "What time is it?")
    page.click("#chat-form button[type=submit]")
    # the turn streams into the page: the tool's result shows while the model still thinks
    page.wait_for_selector(".msg.tool")
    assert "It is tea time." not in page.locator(".transcript").inner_text()
    assert page.locator("#chat-form button[type=submit]").is_disabled()
    page.wait_for_selector(".msg.assistant >> text=It is tea time.")
    page.wait_for_function("location.search.indexOf('session=') >= 0")  # the session's URL
    assert page.locator(".msg.streaming").count() == 0
    assert page.locator(".msg.user").first.inner_text().endswith("What time is it?")
    assert "current_time" in page.locator(".toolcall").first.inner_text()
    page.fill("textarea[name=message]", "Thanks")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".msg.assistant >> text=Bye.")
    streamed = page.locator(".transcript").inner_text()
    page.reload()  # the page as the server renders it shows the same conversation
    assert page.locator(".transcript").inner_text() == streamed
    page.click("nav >> text=Audit")
    rows = page.locator("#audit tbody tr")
    assert rows.count() == 2  # the chat's current_time call and the refused shell call
    assert "current_time" in rows.nth(0).inner_text()
    assert "refused: shell whitelist has no 'rm'" in rows.nth(1).inner_text()
    page.select_option("select[name=success]", "false")
    page.click("form.filters button[type=submit]")
    assert page.locator("#audit tbody tr").count() == 1
    assert "run_shell" in page.locator("#audit").inner_text()

    page.click("text=Sandbox")
    page.fill("form.card input[name=value]", "api.example.com")
    page.select_option("form.card select[name=kind]", "http")
    page.click("form.card button[type=submit]")
    assert [e.value for e in runtime.storage.whitelist.list("http")] == ["api.example.com"]


def test_a_chat_message_after_the_login_expired_leads_to_the_login_page(live_server, page):
    server, _ = live_server
    _login(page, server.url)
    page.click("nav >> text=Chat")
    page.context.clear_cookies()  # the console session is gone (expired, server restarted...)
    page.fill("textarea[name=message]", "Still there?")
    page.click("#chat-form button[type=submit]")
    page.wait_for_url("**/login**")
    page.fill("input[name=token]", TOKEN)  # logging in again leads back to the chat
    page.click("button[type=submit]")
    page.wait_for_url("**/chat")
