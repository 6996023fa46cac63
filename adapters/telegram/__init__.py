"""Telegram: updates in through long polling or a webhook, replies out as edited messages."""
