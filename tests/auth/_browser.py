"""The person at the browser, scripted: follows the authorization server's pages (cookies
kept, redirects followed) the way a browser does; the test authorization server logs the
user in and consents by itself, so no form needs filling."""

from __future__ import annotations

import http.cookiejar
import urllib.error
import urllib.request
from typing import Any


class _Arrived(Exception):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


class Browser:
    """One browser profile (its cookies persist across visits, as a real one's do).

    ``stop_at``: a redirect to a URL starting with it is not followed; :meth:`visit`
    returns that URL instead (the authorization response, as the redirect URI would get it).
    """

    def __init__(self, stop_at: str | None = None) -> None:
        self.visits: list[str] = []
        stop = stop_at

        class Redirects(urllib.request.HTTPRedirectHandler):
            # A login and a consent take several hops (authorize, interaction, resume ...).
            max_redirections = 30
            max_repeats = 10

            def redirect_request(
                self, req: Any, fp: Any, code: int, msg: str, hdrs: Any, newurl: str
            ) -> Any:
                if stop is not None and newurl.startswith(stop):
                    raise _Arrived(newurl)
                return super().redirect_request(req, fp, code, msg, hdrs, newurl)

        self._opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), Redirects()
        )

    def visit(self, url: str) -> str:
        """Go to ``url`` and follow along; the URL the journey ended at."""
        self.visits.append(url)
        try:
            with self._opener.open(url, timeout=15) as resp:
                return str(resp.geturl())
        except _Arrived as arrived:
            return arrived.url
        except urllib.error.HTTPError as e:
            raise AssertionError(
                f"the browser got HTTP {e.code} at {e.url}: {e.read()[:300]!r}"
            ) from None
