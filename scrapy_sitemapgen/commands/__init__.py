"""Scrapy commands, registered through the scrapy.commands entry point."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

__all__ = ["add_store_options"]


def add_store_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--jobdir`` and ``--store``: the stored crawl a command reads, named as the crawl
    named it (its store is then :func:`..locations.jobdir_store`, or the file given)."""
    parser.add_argument("--jobdir", metavar="DIR", help="the JOBDIR of the crawl")
    parser.add_argument("--store", metavar="FILE", help="a store file (SITEMAPGEN_STORE)")
