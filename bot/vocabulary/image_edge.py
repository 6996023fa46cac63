"""The longest edge, in pixels, an image is sent to a model at.

Anthropic scales a larger one down itself, after the upload; a platform that keeps several
sizes of a photo is asked for this one. A module of its own, so the reader process that
scales images (`bot.files.reader`) loads none of the records.
"""

LONG_EDGE = 1568
