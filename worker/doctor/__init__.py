"""`parley doctor`: every store, platform, model and tool a deployment relies on, checked
at once, as a checklist with the fix for each failure and no secret in it."""
