"""A platform's names (session keys, people's and chats' ids, where a reply goes) where its
own package would bring its SDK: `adapters.telegram` imports aiogram as it is imported, half a
second of CPU, and the scheduler and `parley web` name a task's chat from its session key
alone. Slack's and the HTTP API's names stay in their packages' `place.py`, which import no SDK.
"""
