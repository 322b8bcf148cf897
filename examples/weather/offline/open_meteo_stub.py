"""A local stand-in for Open-Meteo's geocoding and forecast APIs (standard library only).

    python offline/open_meteo_stub.py --port 8701

Answers GET /v1/search (geocoding) and GET /v1/forecast with fixed JSON in Open-Meteo's own
shapes (fields as documented at open-meteo.com/en/docs), so the offline walk-through needs no
network. Every request is printed, so you can see the agent's http_get arrive.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PLACES = {
    "hangzhou": {
        "id": 1808926,
        "name": "Hangzhou",
        "latitude": 30.29365,
        "longitude": 120.16142,
        "elevation": 13.0,
        "country_code": "CN",
        "timezone": "Asia/Shanghai",
        "country": "China",
        "admin1": "Zhejiang",
    },
}


def forecast(latitude: float, longitude: float) -> dict:
    """Today's weather: a chilly, windy, showery day (8.4 °C, feels like 5.1 °C)."""
    return {
        "latitude": latitude,
        "longitude": longitude,
        "generationtime_ms": 0.05,
        "utc_offset_seconds": 28800,
        "timezone": "Asia/Shanghai",
        "timezone_abbreviation": "GMT+8",
        "elevation": 13.0,
        "current_units": {
            "time": "iso8601",
            "interval": "seconds",
            "temperature_2m": "°C",
            "apparent_temperature": "°C",
            "wind_speed_10m": "km/h",
        },
        "current": {
            "time": "2026-11-30T14:00",
            "interval": 900,
            "temperature_2m": 8.4,
            "apparent_temperature": 5.1,
            "wind_speed_10m": 21.6,
        },
        "daily_units": {
            "time": "iso8601",
            "temperature_2m_max": "°C",
            "temperature_2m_min": "°C",
            "precipitation_probability_max": "%",
        },
        "daily": {
            "time": ["2026-11-30"],
            "temperature_2m_max": [10.2],
            "temperature_2m_min": [4.7],
            "precipitation_probability_max": [60],
        },
    }


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/v1/search":
            place = PLACES.get(query.get("name", "").strip().lower())
            body = {"results": [place]} if place else {"generationtime_ms": 0.1}
            self.reply(200, body)
        elif url.path == "/v1/forecast":
            try:
                body = forecast(float(query["latitude"]), float(query["longitude"]))
            except (KeyError, ValueError):
                self.reply(400, {"error": True, "reason": "latitude and longitude are required"})
                return
            self.reply(200, body)
        else:
            self.reply(404, {"error": True, "reason": "not found"})

    def reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        print("open-meteo stub:", format % args, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8701)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"open-meteo stub: http://127.0.0.1:{server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
