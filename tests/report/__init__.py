"""The report's pages."""
