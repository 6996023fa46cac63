"""Platform I/O: each platform's updates made into envelopes and the replies shown back,
with the machinery every chat platform shares."""
