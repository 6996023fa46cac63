"""The web tools: `web_fetch` behind an SSRF guard, and `web_search` through a search API."""
