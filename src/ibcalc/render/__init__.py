"""Rendering: rich tables, JSON, CSV, GitHub annotations, JUnit, plots. The only package that
imports rich or matplotlib."""
