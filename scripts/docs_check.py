"""Look at the built documentation site in a real browser: a screenshot of every page, and checks that
need a browser to see.

    make docs-check                           # builds the site, then runs this
    python -m scripts.docs_check --site site --out runs/docs-check   # from the repository root

It serves the site on localhost and opens every page in headless Chromium (Debian's ``chromium``
package, ``apt-get install chromium``; driven by Playwright, which the make target installs). Per page:
a full-page screenshot, no horizontal scrolling of the page itself, no table or code block wider
than its box (hidden columns or line ends), no power written as ``2^16`` and no console error, at
the docs' width (1,024 px) and a phone's (390 px); at the docs' width also no picture shown at under
60% of its drawn size (a phone shrinks every wide picture: there it must only fit). Then it types
"Zudecken" into the site's search and expects results. Exit status 0 when every check holds, 1 with a line per
problem otherwise.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: The docs' width in CSS pixels: what a laptop shows beside another window.
WIDTH = 1024
#: A phone's width in CSS pixels (an iPhone 12 to 15 held upright).
PHONE = 390
SEARCH = "Zudecken"


@contextmanager
def served(site: Path) -> Iterator[str]:
    """The site on a free localhost port, quietly, for as long as the block runs."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # no line per request
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


def pages(site: Path) -> list[str]:
    """Every page's path below the site root (``404.html`` aside)."""
    found = [p.relative_to(site).as_posix() for p in site.rglob("index.html")]
    return sorted(p.removesuffix("index.html") for p in found)


#: What a reader meets at this width: tables and code wider than their box (columns or line ends
#: hidden until scrolled), pictures shown much smaller than drawn, powers written as ``2^16``.
LAYOUT = """(desk) => {
  const out = [];
  const wide = (sel) => [...document.querySelectorAll(sel)].filter(e => e.scrollWidth > e.clientWidth + 2);
  const tables = wide('article .md-typeset__scrollwrap, article .md-typeset__table');
  if (tables.length) out.push(`${tables.length} table(s) wider than the page: last columns hidden`);
  const code = wide('article pre > code');
  if (code.length) out.push(`${code.length} code block(s) wider than the page: line ends hidden`);
  for (const img of document.querySelectorAll('article img')) {
    if (desk && img.naturalWidth > 600 && img.clientWidth < 0.6 * img.naturalWidth)
      out.push(`${img.getAttribute('src')} shown at ` +
               `${Math.round(100 * img.clientWidth / img.naturalWidth)}% of its size`);
  }
  const text = [...document.querySelectorAll('article p, article li, article td')]
    .map(e => { const c = e.cloneNode(true); c.querySelectorAll('code').forEach(x => x.remove());
                return c.textContent; });
  const powers = text.filter(t => /\\d\\^\\d/.test(t)).length;
  if (powers) out.push(`${powers} paragraph(s) write powers as a^b`);
  return out;
}"""


def check_page(browser: Any, url: str, shot: Path, width: int = WIDTH) -> list[str]:
    """Screenshot one page at ``width``; its problems as lines."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url, wait_until="networkidle")
    where = f"{url} at {width} px"
    problems = [f"{where}: console error: {e}" for e in errors]
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    if overflow > 0:
        problems.append(f"{where}: the page scrolls sideways by {overflow} px")
    tables = "[...document.querySelectorAll('article table')]"
    unwrapped = page.evaluate(f"{tables}.filter(t => !t.closest('.md-typeset__scrollwrap')).length")
    if unwrapped:
        problems.append(f"{where}: {unwrapped} table(s) not inside a scrolling box")
    problems += [f"{where}: {line}" for line in page.evaluate(LAYOUT, width >= WIDTH)]
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot), full_page=True, timeout=180_000)  # long pages: slow on 2 cores
    page.close()
    return problems


def check_search(browser: Any, url: str, shot: Path) -> list[str]:
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    page.goto(url, wait_until="networkidle")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    page.locator(".md-search__input").press_sequentially(SEARCH, delay=50)  # key by key, as typed
    try:
        page.wait_for_selector(".md-search-result__item", timeout=15000)
    except Exception:  # noqa: BLE001 - Playwright's timeout: no results appeared
        page.screenshot(path=str(shot))
        shown = page.locator(".md-search-result__meta").inner_text()
        return [f"search for {SEARCH!r} shows no results (it shows {shown!r})"]
    found = page.locator(".md-search-result__item").count()
    page.screenshot(path=str(shot))
    page.close()
    return [] if found else [f"search for {SEARCH!r} found nothing"]


def run(site: Path, out: Path, chromium: str) -> int:
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with served(site) as root, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        names = pages(site)
        for i, name in enumerate(names, 1):
            shot = f"{name.strip('/').replace('/', '-') or 'index'}.png"
            problems += check_page(browser, root + name, out / shot)
            problems += check_page(browser, root + name, out / "phone" / shot, PHONE)
            print(f"[{i}/{len(names)}] {name or '/'}", file=sys.stderr, flush=True)
        problems += check_search(browser, root, out / "search.png")
        browser.close()
    for line in problems:
        print(line)
    print(f"{len(names)} pages at {WIDTH} and {PHONE} px and the search looked at in Chromium: "
          f"{len(problems)} problem(s); "
          f"screenshots in {out}")  # fmt: skip
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--site", type=Path, default=Path("site"), help="the built site (mkdocs build)")
    p.add_argument("--out", type=Path, default=Path("runs/docs-check"), help="where the screenshots go")
    p.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = p.parse_args(argv)
    if not (args.site / "index.html").is_file():
        p.error(f"no built site at {args.site} (make docs builds it)")
    if not Path(args.chromium).is_file():
        p.error(f"no Chromium at {args.chromium}: apt-get install chromium (Debian's package)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        p.error("needs Playwright: pip install playwright (make docs-check installs it)")
    return run(args.site, args.out, args.chromium)


if __name__ == "__main__":
    sys.exit(main())
