"""Client-side pages: when to render, Chromium through Playwright, the render middleware."""
