"""`make demo` keeps working: the example project crawls the demo site and writes a valid set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DEMO = Path(__file__).parents[1] / "example_spider" / "demo.py"


def test_demo_crawls_both_origins_and_writes_valid_sets(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(DEMO), "--output", str(tmp_path / "sitemaps")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "Demo OK: 32 URLs over 2 origins." in result.stdout
    assert result.stdout.count("validated:  0 violations") == 2
    assert len(list((tmp_path / "sitemaps").glob("http_127.0.0.1_*/sitemap.xml"))) == 2
