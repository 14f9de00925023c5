"""Scrapy extensions: progress line, garbage-collector tuning."""
