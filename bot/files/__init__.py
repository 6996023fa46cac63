"""The files people send, stored once by their content, outside Redis."""
