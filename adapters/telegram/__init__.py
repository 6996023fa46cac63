"""Telegram: updates in through long polling or a webhook, replies out as edited messages.

aiogram is imported here first, with its types' validators built on first use rather than
all at once (`adapters.telegram.sdk`): every module of the package imports aiogram.
"""

from adapters.telegram.sdk import import_aiogram

import_aiogram()
