"""What each platform's conversations are called, without the platform's SDK: session keys,
people's and chats' ids, and where a reply goes (`reply_to`). The scheduler and the web
process name a task's target from a session key alone, and importing a platform's package
would import its SDK (aiogram is half a second of CPU) into a process that never talks to it.
"""
