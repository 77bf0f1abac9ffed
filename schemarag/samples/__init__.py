"""Bundled sample schemas: eight Spider databases with their SQLite files.

Spider (Yu et al., 2018) is licensed CC BY-SA 4.0; these files are copied unchanged from it.
"""

from __future__ import annotations

from pathlib import Path

SPIDER_SAMPLE = Path(__file__).parent / "spider"
SAMPLE_SOURCE = f"spider:{SPIDER_SAMPLE}"
