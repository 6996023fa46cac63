"""What every chat platform (Telegram, Slack) shares, so each writes only its wire: the
access gate and the intake of a message, the press decision and the approval prompts' texts,
the lists and commands people use in a chat, and the streamed reply with its pacing."""
