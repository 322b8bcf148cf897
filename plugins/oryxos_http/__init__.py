"""Built-in HTTP plugin: http_get, http_post, http_request, fetch_webpage, download_file and
web_search.

Every request goes through :func:`oryxos_http.client.fetch`: the host whitelist
(``sandbox.http``) and the link-local/metadata address check on every redirect hop, timeouts
and size caps (``http_tools`` in config.yaml). httpx and trafilatura are imported only when a
request is made, so loading the plugin costs nothing.
"""

from __future__ import annotations

from typing import Any

from oryxos import hookimpl

GROUP = "http"


@hookimpl
def oryxos_register_tools(catalog: Any) -> None:
    from oryxos_http.search import PREDICATE, WebSearchTool, is_configured
    from oryxos_http.tools import (
        DownloadFileTool,
        FetchWebpageTool,
        HttpGetTool,
        HttpPostTool,
        HttpRequestTool,
    )

    for tool in (HttpGetTool(), HttpPostTool(), HttpRequestTool(), FetchWebpageTool()):
        catalog.register(tool, groups=[GROUP])
    catalog.register(DownloadFileTool(), groups=[GROUP])
    catalog.add_predicate(PREDICATE, is_configured)
    catalog.register(WebSearchTool(), groups=[GROUP, "web"], available=PREDICATE)
