"""Pages -> retrieval chunks along their structure."""
