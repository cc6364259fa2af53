"""The sourced link catalogue: models (links, system presets) and loading with user overrides."""

from ibcalc.catalogue.load import ENV_VAR, find_link, find_system, load_catalogue, suggest
from ibcalc.catalogue.models import Catalogue, Confidence, Link, LinkKind, System

__all__ = [
    "ENV_VAR",
    "Catalogue",
    "Confidence",
    "Link",
    "LinkKind",
    "System",
    "find_link",
    "find_system",
    "load_catalogue",
    "suggest",
]
